"""A metrics report in the OpenMetrics text format (GitLab's ``artifacts:reports:metrics``).

One gauge family per quantity, one sample per suite (or tag slice) and metric: the score,
the baseline, the delta and the confidence interval's bounds, in points as everywhere; then
per suite the failed checks, and whether the run passed. Scores are rounded as the other
reports round them. GitLab's merge-request widget
shows each sample beside the target branch's. Label values are escaped as the format asks,
and the characters it cannot carry are replaced; a value that is not a number is ``NaN``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from goldgate.model.result import CheckStatus, MetricSummary, RunResult
from goldgate.report.formatting import round_points

_ILLEGAL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

#: family name -> (help text, the summary's value)
_METRIC_FAMILIES = {
    "goldgate_score": "A metric's score on the suite or slice, in points.",
    "goldgate_baseline": "The metric's score in the baseline, in points.",
    "goldgate_delta": "Score minus baseline, in points (on the examples both scored).",
    "goldgate_interval_low": "Lower bound of the delta's confidence interval, in points.",
    "goldgate_interval_high": "Upper bound of the delta's confidence interval, in points.",
}


def _label(value: str) -> str:
    text = _ILLEGAL.sub("\ufffd", value)
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(round_points(value))


def _labels(pairs: list[tuple[str, str]]) -> str:
    return "{" + ",".join(f'{name}="{_label(value)}"' for name, value in pairs) + "}"


def _value(family: str, summary: MetricSummary) -> float | None:
    interval = summary.interval
    return {
        "goldgate_score": summary.current,
        "goldgate_baseline": summary.baseline,
        "goldgate_delta": summary.delta,
        "goldgate_interval_low": None if interval is None else interval.low,
        "goldgate_interval_high": None if interval is None else interval.high,
    }[family]


def _summaries(result: RunResult) -> Iterator[tuple[list[tuple[str, str]], MetricSummary]]:
    for suite in result.suites:
        for summary in suite.metrics:
            yield [("suite", suite.name), ("metric", summary.metric)], summary
        for piece in suite.slices:
            for summary in piece.metrics:
                labels = [("suite", suite.name), ("slice", piece.tag), ("metric", summary.metric)]
                yield labels, summary


def render_openmetrics(result: RunResult) -> str:
    """The run's scores and verdict as OpenMetrics text, ending in ``# EOF``."""
    lines: list[str] = []
    summaries = list(_summaries(result))
    for family, help_text in _METRIC_FAMILIES.items():
        samples = [
            (labels, value)
            for labels, summary in summaries
            if (value := _value(family, summary)) is not None
        ]
        if not samples:
            continue
        lines += [f"# TYPE {family} gauge", f"# HELP {family} {help_text}"]
        lines += [f"{family}{_labels(labels)} {_number(value)}" for labels, value in samples]
    if result.suites:
        lines += [
            "# TYPE goldgate_checks_failed gauge",
            "# HELP goldgate_checks_failed Gate checks the suite failed.",
        ]
        for suite in result.suites:
            failed = sum(check.status is CheckStatus.FAIL for check in suite.checks)
            lines.append(f"goldgate_checks_failed{_labels([('suite', suite.name)])} {failed}")
    lines += [
        "# TYPE goldgate_passed gauge",
        "# HELP goldgate_passed 1 when the gate passed (exit code 0), else 0.",
        f"goldgate_passed {1 if result.exit_code == 0 else 0}",
        "# EOF",
    ]
    return "\n".join(lines) + "\n"
