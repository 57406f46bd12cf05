"""How every report writes a number, a verdict or a check's status.

Scores, deltas and interval bounds are points on the 0-100 scale, rounded to
:data:`DECIMALS` once, here, so that Markdown, HTML, JUnit and the terminal show the same
digits; an absent value is an em dash.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from goldgate import wording
from goldgate.model.result import CheckResult, CheckStatus, Interval, SuiteResult, Verdict, gain

#: decimals shown for every score, delta and interval bound (points on the 0-100 scale)
DECIMALS = 2
MINUS = "\u2212"
DASH = "\u2014"

VERDICT_ICONS = {
    Verdict.PASS: "\u2705",
    Verdict.REGRESSED: "\u274c",
    Verdict.IMPROVED: "\U0001f680",
    Verdict.ERROR: "\u26a0\ufe0f",
}
VERDICT_LABELS = {
    Verdict.PASS: "passed",
    Verdict.REGRESSED: "regressed",
    Verdict.IMPROVED: "improved",
    Verdict.ERROR: "error",
}
STATUS_ICONS = {
    CheckStatus.PASS: "\u2705",
    CheckStatus.FAIL: "\u274c",
    CheckStatus.FORGIVEN: "\u3030\ufe0f",
    CheckStatus.IMPROVED: "\u2b06\ufe0f",
    CheckStatus.SKIPPED: "\u23ed\ufe0f",
}
STATUS_LABELS = {
    CheckStatus.PASS: "pass",
    CheckStatus.FAIL: "fail",
    CheckStatus.FORGIVEN: "forgiven (noise)",
    CheckStatus.IMPROVED: "improved",
    CheckStatus.SKIPPED: "skipped",
}


def round_points(value: float) -> float:
    """Round a score or delta for display (``-0.0`` becomes ``0.0``)."""
    # round() rounds the binary value correctly, as formatting does, and far faster.
    return round(value, DECIMALS) + 0.0


def fmt_points(value: float | None) -> str:
    """A score such as ``38.52``; an em dash when absent."""
    if value is None or not math.isfinite(value):
        return DASH
    return f"{round_points(value):.{DECIMALS}f}".replace("-", MINUS)


def fmt_delta(value: float | None) -> str:
    """A signed delta such as ``+1.20`` or ``−0.35``; ``0.00`` carries no sign."""
    if value is None or not math.isfinite(value):
        return DASH
    rounded = round_points(value)
    if rounded == 0:
        return f"{0:.{DECIMALS}f}"
    return f"{rounded:+.{DECIMALS}f}".replace("-", MINUS)


def fmt_interval(interval: Interval | None) -> str:
    """An interval such as ``[−2.10, +0.30]``."""
    if interval is None:
        return DASH
    return f"[{fmt_delta(interval.low)}, {fmt_delta(interval.high)}]"


def fmt_level(level: float | None) -> str:
    """A confidence level such as ``95%``."""
    if level is None:
        return "CI"
    return f"{level * 100:g}%"


def fmt_p(p_value: float | None) -> str:
    """A p-value to three decimals, ``<0.001`` below that (:func:`goldgate.wording.p_value`)."""
    return wording.p_value(p_value)


def fmt_threshold(check: CheckResult) -> str:
    """The rule and its threshold as a user wrote it, e.g. ``max_drop 1.0``."""
    if check.rule in ("max_flips", "max_new"):
        return f"{check.rule} {int(check.threshold)}"
    return f"{check.rule} {check.threshold:g}"


def direction(delta: float | None, higher_is_better: bool = True) -> str:
    """``down`` (worse), ``up`` (better), ``flat`` or ``none``: the CSS class of a delta.

    The class says worse or better, not the sign: a TER delta of +2 is ``down`` (red).
    """
    if delta is None or not math.isfinite(delta):
        return "none"
    rounded = gain(round_points(delta), higher_is_better)
    return "down" if rounded < 0 else "up" if rounded > 0 else "flat"


def directions(suite: SuiteResult) -> dict[str, bool]:
    """Each metric's ``higher_is_better`` in a suite (metrics it does not list: True)."""
    return {m.metric: m.higher_is_better for m in suite.metrics}


def trend_text(trend: Sequence[float]) -> str:
    """Blessed scores, oldest first, as ``74.20 → 74.90 → 75.10``."""
    return " \u2192 ".join(fmt_points(value) for value in trend)


def sparkline(trend: Sequence[float], width: float = 60, height: float = 16) -> str:
    """SVG polyline points of a trend in a ``width``×``height`` box; "" for fewer than two."""
    if len(trend) < 2:
        return ""
    low, high = min(trend), max(trend)
    span = (high - low) or 1.0
    step = width / (len(trend) - 1)
    return " ".join(
        f"{i * step:.1f},{height - 1 - (value - low) / span * (height - 2):.1f}"
        for i, value in enumerate(trend)
    )


def clip(text: str, limit: int) -> tuple[str, int]:
    """Cut text to at most ``limit`` characters; returns the text and how many were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit
