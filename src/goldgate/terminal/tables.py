"""Plain-text tables of scores for the terminal and CI logs: numbers in points, padded columns.

Cheap to import (every command does): the result's types are named for the type checker only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from goldgate.model.result import Interval, MetricSummary


def number(value: float | None) -> str:
    """A score in points for a table, or a dash."""
    return "-" if value is None else f"{value:.2f}"


def signed(value: float | None) -> str:
    """A delta in points for a table, or a dash."""
    return "-" if value is None else f"{value:+.2f}"


def interval(value: Interval | None) -> str:
    """A confidence interval for a table, or a dash."""
    return "-" if value is None else f"[{value.low:+.2f}, {value.high:+.2f}]"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    """A left-aligned first column and right-aligned numbers, padded to the widest cell."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ]
        lines.append(indent + "  ".join(cells).rstrip())
    return "\n".join(lines)


def metric_rows(metrics: Sequence[MetricSummary]) -> list[list[str]]:
    """Rows of metric, baseline, current, delta and interval."""
    return [
        [m.label, number(m.baseline), m.current_text(number), signed(m.delta), interval(m.interval)]
        for m in metrics
    ]


#: the columns of :func:`metric_rows`
METRIC_HEADER = ["metric", "baseline", "current", "delta", "interval"]
