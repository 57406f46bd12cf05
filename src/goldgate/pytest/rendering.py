"""What pytest shows of goldgate's results: a failed gate's text and the terminal summary.

A failure names the failed checks, the metric table and the examples that worsened most (or,
without a baseline, those scoring past a bound), each with its texts clipped to a line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from goldgate.wording import p_value, plural

if TYPE_CHECKING:
    # Imported where used: the plugin is imported by every pytest run in an environment that
    # has goldgate installed, and pydantic models cost a noticeable part of a second.
    from goldgate.model.example_table import ExampleResult
    from goldgate.model.result import CheckResult, RunResult, SuiteResult

SHOWN_EXAMPLES = 5
SHOWN_CHARS = 160


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"


def metric_table(suite: SuiteResult, *, indent: str = "  ") -> list[str]:
    """The suite's metrics: baseline, current, delta, interval and p-value, aligned."""
    header = ["metric", "baseline", "current", "delta", "interval", "p"]
    rows = [header]
    for summary in suite.metrics:
        interval = summary.interval
        rows.append(
            [
                summary.label,
                _num(summary.baseline),
                summary.current_text(_num),
                _signed(summary.delta),
                "—" if interval is None else f"[{interval.low:+.2f}, {interval.high:+.2f}]",
                p_value(summary.p_value),
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


def suite_heading(suite: SuiteResult) -> str:
    """``suite 'qa': regressed (50 examples, goldens/qa.jsonl)``."""
    size = f"{plural(suite.n_examples, 'example')}, {suite.goldens}"
    return f"suite {suite.name!r}: {suite.verdict.value} ({size})"


def worst_regressed(suite: SuiteResult, metrics: Sequence[str], limit: int) -> list[str]:
    """The examples that worsened most from the baseline on ``metrics``, with their texts.

    Ranked from the score columns: texts (rows) are read only for the examples shown.
    """
    import numpy as np

    from goldgate.model.example_table import example_table
    from goldgate.model.result import gain
    from goldgate.report.ranking import gains

    higher = {m.metric: m.higher_is_better for m in suite.metrics}
    table = example_table(suite.examples)
    columns = {metric: (table.current(metric), table.baseline(metric)) for metric in metrics}
    fall = np.zeros(len(table))
    for metric, (now, then) in columns.items():
        worsening = -gains(now, then, higher.get(metric, True))
        fall = np.fmax(fall, np.where(worsening > 0, worsening, 0.0))
    fallen = np.flatnonzero(fall > 0)
    order = fallen[np.lexsort((fallen, -fall[fallen]))][:limit].tolist()
    ranked: list[tuple[float, int, list[str]]] = []
    for position in order:
        moves = []
        for metric, (now, then) in columns.items():
            cur, base = float(now[position]), float(then[position])
            if -gain(cur - base, higher.get(metric, True)) > 0:  # false where one is NaN
                moves.append(f"{metric} {base:.2f} → {cur:.2f}")
        lines = _example_lines(suite, table[position], ", ".join(moves))
        ranked.append((-float(fall[position]), position, lines))
    return _shown(ranked, limit, total=len(fallen))


def extreme_examples(suite: SuiteResult, metric: str, *, highest: bool, limit: int) -> list[str]:
    """The examples scoring lowest (or highest) on ``metric``: for bounds without a baseline."""
    import numpy as np

    from goldgate.model.example_table import example_table

    table = example_table(suite.examples)
    now = table.current(metric)
    scored = np.flatnonzero(~np.isnan(now))
    keys = -now[scored] if highest else now[scored]
    ranked: list[tuple[float, int, list[str]]] = []
    for position in scored[np.lexsort((scored, keys))][:limit].tolist():
        score = float(now[position])
        lines = _example_lines(suite, table[position], f"{metric} {score:.2f}")
        ranked.append((-score if highest else score, position, lines))
    return _shown(ranked, limit, more=False)


def _example_lines(suite: SuiteResult, example: ExampleResult, scores: str) -> list[str]:
    where = f"{suite.goldens}:{example.line}" if example.line else suite.goldens
    lines = [f"  {example.id} ({where}): {scores}", f"    input:     {_clip(example.input)}"]
    lines += [f"    reference: {_clip(reference)}" for reference in example.references[:3]]
    lines.append(f"    output:    {_clip(example.output)}")
    if example.baseline_output is not None and example.baseline_output != example.output:
        lines.append(f"    was:       {_clip(example.baseline_output)}")
    return lines


def _shown(
    ranked: list[tuple[float, int, list[str]]],
    limit: int,
    *,
    more: bool = True,
    total: int | None = None,
) -> list[str]:
    """The lines of the first ``limit`` ranked examples; ``total`` counts those ranked
    (when only the shown ones were given lines)."""
    ranked.sort(key=lambda item: item[:2])
    shown = [line for _, _, lines in ranked[:limit] for line in lines]
    total = len(ranked) if total is None else total
    if more and total > limit:
        shown.append(f"  … and {total - limit} more")
    return shown


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def render_failure(
    suite: SuiteResult, failed: Sequence[CheckResult], result: RunResult | None = None
) -> str:
    """The failure text of a suite: failed checks, the metric table, the worst examples."""
    from goldgate.report.diagnosis_view import terminal_lines

    lines = [f"goldgate {suite_heading(suite)}"]
    if suite.diagnosis is not None:
        lines.append(f"why: {suite.diagnosis.headline}")
    if result is not None and result.baseline:
        found = "" if result.baseline_found else " (not found)"
        lines.append(f"baseline: {result.baseline}{found}")
    lines.append("failed checks:")
    for check in failed:
        lines.append(f"  {check.rule} {check.threshold:g}: {check.message}")
        if check.must_pass is not None:
            from goldgate.report.must_pass_view import terminal_lines as must_pass_lines

            lines += must_pass_lines(check)
    lines.append("metrics:")
    lines += metric_table(suite)
    lines += terminal_lines(suite, indent="")[1:]
    falling = list(dict.fromkeys(c.metric for c in failed if c.rule not in ("max", "max_new")))
    examples = worst_regressed(suite, falling, SHOWN_EXAMPLES)
    if examples:
        lines.append(f"worst regressed examples ({', '.join(falling)}):")
        lines += examples
    else:
        # No baseline to fall from: a bound failed, so show what pulls the score past it.
        bound = next((c for c in failed if c.rule in ("min", "max")), None)
        if bound is not None:
            highest = bound.rule == "max"
            lines.append(f"{'highest' if highest else 'lowest'}-scoring examples ({bound.metric}):")
            lines += extreme_examples(suite, bound.metric, highest=highest, limit=SHOWN_EXAMPLES)
    return "\n".join(lines)


def render_summary(result: RunResult) -> list[str]:
    """The terminal summary of a run: the verdict and each suite's table."""
    from goldgate.model.result import CheckStatus
    from goldgate.report.diagnosis_view import terminal_lines

    lines = [f"verdict: {result.verdict.value}"]
    for suite in result.suites:
        lines.append(suite_heading(suite))
        if suite.error is not None:
            lines.append(f"  error: {suite.error}")
            continue
        lines += metric_table(suite)
        lines += terminal_lines(suite)
        for check in suite.checks:
            if check.status is not CheckStatus.PASS:
                lines.append(f"  {check.status.value}: {check.message}")
    lines += [f"hint: {hint}" for hint in result.hints]
    return lines
