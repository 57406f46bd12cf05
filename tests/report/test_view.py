from __future__ import annotations

import pytest

from goldgate.model.result import CheckResult, CheckStatus, Interval, MetricSummary, Verdict
from goldgate.report.example_view import example_row
from goldgate.report.formatting import fmt_delta, fmt_interval, fmt_p, fmt_points, round_points
from goldgate.report.ranking import ranking_metrics, worst_regressed
from goldgate.report.view import build_view
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


def test_worst_regressed_ranks_by_the_flagged_checks_metric_first() -> None:
    suite = make_result("regressed", n_examples=40).suites[1]
    # summarize: rouge2's check was forgiven, rougeLsum's passed, length_ratio is not gated.
    assert ranking_metrics(suite)[:2] == ("rouge2", "rougeLsum")
    worst = worst_regressed(suite)
    assert worst
    gated = {c.metric for c in suite.checks}

    def delta(ex_id: str, metric: str) -> float:
        ex = next(e for e in suite.examples if e.id == ex_id)
        return round_points(ex.scores[metric] - ex.baseline_scores[metric])

    keys = [(delta(ex.id, "rouge2"), delta(ex.id, "rougeLsum")) for ex in worst]
    assert keys == sorted(keys)
    # Every example with a drop in a gated metric is listed.
    expected = {
        e.id for e in suite.examples if e.baseline_scores and min(delta(e.id, m) for m in gated) < 0
    }
    assert {e.id for e in worst} == expected


def test_examples_are_labelled_by_the_failed_checks_metric() -> None:
    # A translation suite gated on BLEU and chrF whose BLEU check failed: BLEU ranks and
    # labels its examples even where chrF fell further.
    result = make_result("regressed", n_examples=30)
    translate = result.suites[2]
    bleu = next(m for m in translate.metrics if m.metric == "bleu")
    chrf = next(m for m in translate.metrics if m.metric == "chrf")
    failed = CheckResult(
        suite="translate",
        metric="bleu",
        rule="max_drop",
        threshold=1.0,
        status=CheckStatus.FAIL,
        message="",
        current=bleu.current,
        baseline=bleu.baseline,
        delta=-3.0,
    )
    passed = failed.model_copy(update={"metric": "chrf", "status": CheckStatus.PASS})
    translate = translate.model_copy(update={"checks": [passed, failed]})
    assert ranking_metrics(translate)[0] == "bleu"
    assert chrf.metric == "chrf"
    worst = worst_regressed(translate)
    rows = [example_row(translate, ex) for ex in worst]
    assert all(r.worst is not None and r.worst.metric == "bleu" for r in rows)
    bleu_deltas = [r.worst.delta for r in rows if r.worst is not None]
    assert bleu_deltas == sorted(bleu_deltas)


def test_slice_rule_is_the_same_up_and_down() -> None:
    from goldgate.report.view import SLICE_MIN_MOVE, slice_moved

    def summary(delta: float, p: float) -> MetricSummary:
        return MetricSummary(
            metric="exact_match",
            signature="s",
            current=60.0 + delta,
            baseline=60.0,
            delta=delta,
            interval=Interval(low=delta - 50, high=delta + 50, level=0.95),
            p_value=p,
        )

    # A slice that fell 100 -> 60 with p = 0.086 is listed, as is the same rise.
    assert slice_moved(summary(-40.0, 0.086), [])
    assert slice_moved(summary(+40.0, 0.086), [])
    assert not slice_moved(summary(SLICE_MIN_MOVE - 0.01, 0.5), [])
    assert not slice_moved(summary(-(SLICE_MIN_MOVE - 0.01), 0.5), [])
