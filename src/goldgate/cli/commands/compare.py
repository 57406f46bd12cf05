"""``goldgate compare A.json B.json``: two saved results (or baselines) side by side;
``goldgate compare A B C ...``: many systems in one ranked matrix of paired tests per suite
and metric (:mod:`goldgate.pipeline.compare_many`), printed and written as Markdown, HTML
and JSON."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldgate.cli.commands._common import (
    add_config_argument,
    add_quiet_argument,
    add_suite_argument,
    number,
    read_saved_document,
    signed,
    table,
)
from goldgate.terminal import console
from goldgate.wording import change_decimals

HELP = (
    "Compare saved results (result.json), baselines or configured systems: two side by"
    " side, three or more in a ranked matrix of paired bootstrap tests."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate compare``."""
    parser.add_argument(
        "systems",
        nargs="+",
        metavar="SYSTEM",
        help="a result.json, a baseline, or the name of a system in the configuration's"
        " systems:, optionally labelled as NAME=PATH; two files are compared side by side"
        " (B - A), three or more (or --matrix) in a ranked matrix",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--matrix",
        action="store_true",
        help="the ranked matrix with paired tests even for two systems",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="also write the matrix as compare.md, compare.html and compare.json into DIR",
    )
    add_suite_argument(parser)
    add_config_argument(parser)
    add_quiet_argument(parser)


@dataclass(frozen=True)
class _Scores:
    """Per suite: golden hash and metric → (score, signature); each metric's direction."""

    suites: dict[str, tuple[str, dict[str, tuple[float, str]]]]
    #: metric → higher_is_better, where known: a result records it; a baseline does not, so
    #: there only a built-in metric's is known
    directions: dict[str, bool] = field(default_factory=dict)


def read_scores(path: Path) -> _Scores:
    """The suite scores of a result or baseline file; ``InputError`` naming it otherwise."""
    from goldgate.metrics.registry import builtin_higher_is_better
    from goldgate.model.baseline import BASELINE_SCHEMA_VERSIONS
    from goldgate.model.baseline_io import parse_baseline
    from goldgate.model.result import RunResult

    text, document = read_saved_document(path)
    kind = document.get("schema_version")
    if kind in BASELINE_SCHEMA_VERSIONS:
        baseline = parse_baseline(text, str(path))
        specs = {spec for suite in baseline.suites.values() for spec in suite.metrics}
        known = {spec: builtin_higher_is_better(spec) for spec in specs}
        return _Scores(
            {
                name: (
                    suite.golden_hash,
                    {s: (m.score, m.signature) for s, m in suite.metrics.items()},
                )
                for name, suite in baseline.suites.items()
            },
            {spec: better for spec, better in known.items() if better is not None},
        )
    result = RunResult.from_json_file(path, examples=False)
    return _Scores(
        {
            suite.name: (
                suite.golden_hash,
                {m.metric: (m.current, m.signature) for m in suite.metrics},
            )
            for suite in result.suites
            if suite.error is None
        },
        {m.metric: m.higher_is_better for suite in result.suites for m in suite.metrics},
    )


def _change(delta: float | None, higher_is_better: bool) -> str | None:
    """``better``, ``worse`` or ``unchanged`` in the metric's direction (a TER rise is worse)."""
    from goldgate.model.result import gain

    if delta is None:
        return None
    if change_decimals(delta) is None:
        return "unchanged"
    return "better" if gain(delta, higher_is_better) > 0 else "worse"


def compare(a: _Scores, b: _Scores) -> dict[str, Any]:
    """Per suite and metric: both scores, B − A, better or worse in the metric's direction,
    and whether they may be compared."""
    out: dict[str, Any] = {}
    for name in [*a.suites, *(n for n in b.suites if n not in a.suites)]:
        hash_a, metrics_a = a.suites.get(name, ("", {}))
        hash_b, metrics_b = b.suites.get(name, ("", {}))
        metrics: dict[str, Any] = {}
        for spec in [*metrics_a, *(s for s in metrics_b if s not in metrics_a)]:
            score_a, signature_a = metrics_a.get(spec, (None, None))
            score_b, signature_b = metrics_b.get(spec, (None, None))
            both = score_a is not None and score_b is not None
            delta = score_b - score_a if both else None  # type: ignore[operator]
            # A metric neither file knows the direction of (a custom one, in two baselines)
            # reads as higher-is-better, as everywhere else.
            higher_is_better = a.directions.get(spec, b.directions.get(spec, True))
            metrics[spec] = {
                "a": score_a,
                "b": score_b,
                "delta": delta,
                "higher_is_better": higher_is_better,
                "change": _change(delta, higher_is_better),
                "comparable": both and signature_a == signature_b,
                "signature_a": signature_a,
                "signature_b": signature_b,
            }
        out[name] = {"same_goldens": hash_a == hash_b, "metrics": metrics}
    return {"suites": out}


def _signed(delta: float | None) -> str:
    """B − A to two decimals, more when that would show ``+0.00`` for a real change."""
    if delta is None:
        return signed(None)
    places = change_decimals(delta)
    return "0.00" if places is None else f"{delta:+.{places}f}"


def run(args: argparse.Namespace) -> int:
    """Print the comparison; 0 unless a file cannot be read (2): never a gate."""
    from goldgate.errors import UsageError

    if len(args.systems) < 2:
        raise UsageError("compare needs at least two systems (result.json, baseline or name)")
    if _wants_matrix(args):
        from goldgate.cli.commands._compare_matrix import run_matrix

        return run_matrix(args)
    args.a, args.b = Path(args.systems[0]), Path(args.systems[1])
    found = compare(read_scores(args.a), read_scores(args.b))
    if args.json:
        console.out(console.json_text(json.dumps(found, indent=2)))
        return 0
    console.out(f"A: {args.a}\nB: {args.b}")
    for name, suite in found["suites"].items():
        note = "" if suite["same_goldens"] else " (different golden sets: not paired)"
        console.out(f"\nsuite {name}{note}")
        rows = []
        for spec, m in suite["metrics"].items():
            flag = (
                "" if m["comparable"] or m["a"] is None or m["b"] is None else "signatures differ"
            )
            label = spec if m["higher_is_better"] else f"{spec} (lower is better)"
            change = m["change"] or "-"
            rows.append([label, number(m["a"]), number(m["b"]), _signed(m["delta"]), change, flag])
        console.out(table(["metric", "A", "B", "B-A", "B vs A", ""], rows))
    return 0


def _wants_matrix(args: argparse.Namespace) -> bool:
    """Three or more systems, ``--matrix``, ``--out`` or ``--suite``, a labelled system
    (``NAME=PATH``) or a configured system's name; two plain files keep the side-by-side
    table."""
    if len(args.systems) > 2 or args.matrix or args.out is not None or args.suites:
        return True
    return any("=" in given or _is_name(given) for given in args.systems)


def _is_name(given: str) -> bool:
    """A configured system's name rather than a file: no such file, no path separator and
    no ``.json`` suffix (a missing result.json stays the error naming that file)."""
    return not Path(given).exists() and "/" not in given and not given.endswith(".json")
