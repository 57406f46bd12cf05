"""``goldgate calibrate``: run the system K times unchanged; spread, false alarms, thresholds."""

from __future__ import annotations

import argparse
import json

from goldgate.cli.commands._common import (
    add_config_argument,
    add_quiet_argument,
    add_suite_argument,
    load,
    progress,
    table,
)
from goldgate.errors import UsageError
from goldgate.terminal import console
from goldgate.wording import plural

HELP = "Measure run-to-run noise and the gate's false-alarm rate; suggest max_drop values."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate calibrate``."""
    add_config_argument(parser)
    add_suite_argument(parser)
    parser.add_argument(
        "--runs", type=int, default=10, metavar="K", help="times to run the system (default 10)"
    )
    parser.add_argument(
        "--target",
        type=float,
        default=0.01,
        metavar="RATE",
        help="false-alarm rate the suggested max_drop keeps under (default 0.01)",
    )
    parser.add_argument(
        "--write",
        action="store_true",
        help="write the suggested max_drop of every gated metric into goldgate.yaml",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    add_quiet_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Calibrate; 0, or 2 on a usage or input error."""
    from goldgate.gate.calibrate import MIN_TARGET, Calibration, calibrate

    if args.runs < 2:
        raise UsageError("--runs must be at least 2 (pairs of runs are compared)")
    if not MIN_TARGET <= args.target < 0.5:
        raise UsageError(
            f"--target must be a rate from {MIN_TARGET:g} to 0.5, such as 0.01"
            f" (got {args.target:g})"
        )
    config = load(args)
    found: Calibration = calibrate(
        config, runs=args.runs, target=args.target, suites=args.suites, progress=progress(args)
    )
    for warning in found.warnings:
        console.err(f"goldgate: warning: {warning}")
    if args.json:
        console.out(console.json_text(json.dumps(as_json(found), indent=2)))
    else:
        console.out(render(found))
    if args.write:
        from goldgate.model.config_write import set_gate_values

        if config.source is None:
            raise UsageError("--write needs a configuration file")
        # Only a value that changes something: none for a metric without a suggestion, nor
        # for a rule kept as it is (it already met the target).
        values = {
            (metric.suite, metric.metric, "max_drop"): metric.suggested_max_drop
            for suite in found.suites
            for metric in suite.metrics
            if metric.metric in config.suites[suite.suite].gate
            and metric.suggested_max_drop
            and metric.suggested_max_drop != metric.max_drop
        }
        skipped = set_gate_values(config.source, values)
        written = len(values) - len(skipped)
        console.out(f"wrote {plural(written, 'max_drop value')} into {config.source}")
        for key in skipped:
            console.err(f"goldgate: not written (add it by hand): {console.inline(key)}")
    return 0


def as_json(found: object) -> dict[str, object]:
    """The calibration as a JSON document."""
    from goldgate.gate.calibrate import Calibration

    assert isinstance(found, Calibration)
    return {
        "runs": found.runs,
        "target": found.target,
        "warnings": found.warnings,
        "suites": [
            {
                "suite": s.suite,
                "n_examples": s.n_examples,
                "changing_examples": s.changing,
                "pairs": s.pairs,
                "false_alarm_rate": s.false_alarm_rate,
                "metrics": [
                    {
                        "metric": m.metric,
                        "higher_is_better": m.higher_is_better,
                        "scores": m.scores,
                        "mean": m.mean,
                        "spread": m.spread,
                        "false_alarm_rate": m.false_alarm_rate,
                        "rules": [
                            {
                                "rule": r.rule,
                                "threshold": r.threshold,
                                "fails": r.fails,
                                "pairs": r.pairs,
                                "rate": r.rate,
                            }
                            for r in m.rules
                        ],
                        "max_drop": m.max_drop,
                        "suggested_max_drop": m.suggested_max_drop,
                        "note": m.note,
                    }
                    for m in s.metrics
                ],
            }
            for s in found.suites
        ],
    }


def render(found: object) -> str:
    """The plain-text report."""
    from goldgate.gate.calibrate import Calibration

    assert isinstance(found, Calibration)
    lines = [
        f"calibrated on {plural(found.runs, 'unchanged run')}; every ordered pair replayed"
        f" through the gate; suggestions keep false alarms under {found.target:.1%}"
    ]
    for suite in found.suites:
        lines.append("")
        lines.append(
            f"suite {suite.suite}: {len(suite.changing)} of {plural(suite.n_examples, 'example')}"
            f" gave different outputs across runs; the gate failed {suite.fails} of"
            f" {plural(suite.pairs, 'pair')} ({suite.false_alarm_rate:.1%} false alarms)"
        )
        header = ["metric", "mean", "spread", "rules: false alarms", "max_drop now", "suggested"]
        rows = []
        for m in suite.metrics:
            rates = (
                ", ".join(f"{r.rule} {r.threshold:g}: {r.rate:.1%}" for r in m.rules) or "not gated"
            )
            rows.append(
                [
                    m.metric,
                    f"{m.mean:.2f}",
                    f"{m.spread:.2f}",
                    rates,
                    "-" if m.max_drop is None else f"{m.max_drop:.2f}",
                    "-" if m.suggested_max_drop is None else f"max_drop {m.suggested_max_drop:.2f}",
                ]
            )
        lines.append(table(header, rows))
        lines += [f"  {m.metric}: {m.note}" for m in suite.metrics if m.note is not None]
        shown = sorted(suite.changing.items(), key=lambda item: (-item[1], item[0]))[:5]
        if shown:
            listed = ", ".join(f"{example_id} ({count} outputs)" for example_id, count in shown)
            more = len(suite.changing) - len(shown)
            lines.append(f"  changing: {listed}" + (f" and {more} more" if more > 0 else ""))
    return "\n".join(lines)
