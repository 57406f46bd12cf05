from __future__ import annotations

import pytest

from goldgate.report.view import (
    build_view,
    fmt_delta,
    fmt_interval,
    fmt_p,
    fmt_points,
    round_points,
    worst_regressed,
)
from goldgate.result import CheckStatus, Interval, Verdict
from tests.report.fixtures import KINDS, make_result


@pytest.mark.parametrize(
    ("value", "points", "delta"),
    [
        (2.675, "2.67", "+2.67"),  # binary 2.675 is just below the half
        (0.004, "0.00", "0.00"),
        (-0.004, "0.00", "0.00"),
        (-1.2, "\u22121.20", "\u22121.20"),
        (100.0, "100.00", "+100.00"),
        (None, "\u2014", "\u2014"),
        (float("nan"), "\u2014", "\u2014"),
    ],
)
def test_formats(value: float | None, points: str, delta: str) -> None:
    assert fmt_points(value) == points
    assert fmt_delta(value) == delta


def test_round_points_has_no_negative_zero() -> None:
    assert str(round_points(-0.001)) == "0.0"


def test_interval_and_p() -> None:
    assert fmt_interval(Interval(low=-2.104, high=0.3, level=0.95)) == "[\u22122.10, +0.30]"
    assert fmt_p(0.0004) == "<0.001"
    assert fmt_p(0.0416) == "0.042"


@pytest.mark.parametrize("kind", KINDS)
def test_view_keeps_the_decided_verdict_and_statuses(kind: str) -> None:
    result = make_result(kind)  # type: ignore[arg-type]
    view = build_view(result)
    assert view.verdict is result.verdict
    assert [c.status for s in view.suites for c in s.checks] == [c.status for c in result.checks()]
    assert len(view.failed_checks) == sum(c.status is CheckStatus.FAIL for c in result.checks())


def test_a_verdict_that_contradicts_the_checks_is_shown_as_decided() -> None:
    # The reporter never second-guesses the gate, even when its checks look fine.
    result = make_result("pass").model_copy(update={"verdict": Verdict.REGRESSED})
    assert build_view(result).verdict_label == "regressed"


def test_worst_regressed_orders_by_drop_then_id() -> None:
    suite = make_result("regressed", n_examples=40).suites[1]
    worst = worst_regressed(suite)
    assert worst
    gated = {c.metric for c in suite.checks}

    def drop(ex_id: str) -> float:
        ex = next(e for e in suite.examples if e.id == ex_id)
        return min(
            round_points(ex.scores[m] - ex.baseline_scores[m])
            for m in gated
            if m in ex.baseline_scores
        )

    drops = [drop(ex.id) for ex in worst]
    assert drops == sorted(drops)
    assert all(d < 0 for d in drops)
    # Every example with a drop in a gated metric is listed.
    expected = {e.id for e in suite.examples if e.baseline_scores and drop(e.id) < 0}
    assert {e.id for e in worst} == expected
