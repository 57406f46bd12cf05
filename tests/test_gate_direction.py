"""The gate reads every rule in the metric's direction: for an error rate a rise is the drop.

An error rate is accuracy's mirror (100 - accuracy per example), so every check on it must
reach the status the same check reaches on accuracy, with the same flips, in every slice.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.gate.rules import SuiteEvaluation, evaluate_suite
from goldgate.model.result import CheckStatus, Verdict
from tests.gate_metrics import accuracy, error_rate, right_wrong, wrong_right
from tests.test_gate import Rule, Significance, baseline_of, by_rule, lose, pattern, scored


def _pair(
    base: list[bool], now: list[bool], rule: Rule, significance: Significance | None
) -> list[SuiteEvaluation]:
    tags = [("a",) if i % 3 == 0 else ("b",) for i in range(len(base))]
    results = []
    for spec, metric, stats in (
        ("accuracy", accuracy(), right_wrong),
        ("error_rate", error_rate(), wrong_right),
    ):
        baseline = baseline_of(scored({spec: stats(base)}, tags, {spec: metric}))
        current = scored({spec: stats(now)}, tags, {spec: metric})
        results.append(evaluate_suite(current, baseline, {spec: rule}, significance))
    return results


def test_an_error_rate_that_rises_fails_and_one_that_falls_improved() -> None:
    base = pattern(40, 0.7, seed=3)
    rules = {"error_rate": Rule(max_drop=1.0, max_drop_rel=0.01, max_flips=0)}
    baseline = baseline_of(
        scored({"error_rate": wrong_right(base)}, metrics={"error_rate": error_rate()})
    )
    worse = scored(
        {"error_rate": wrong_right(lose(base, 12))}, metrics={"error_rate": error_rate()}
    )
    evaluation = evaluate_suite(worse, baseline, rules, Significance())
    assert evaluation.verdict is Verdict.REGRESSED
    check = by_rule(evaluation, "max_drop")
    assert check.status is CheckStatus.FAIL
    assert check.delta is not None and check.delta > 0
    assert check.higher_is_better is False
    assert "qa: error_rate rose beyond max_drop 1.00" in check.message
    assert by_rule(evaluation, "max_drop_rel").status is CheckStatus.FAIL
    assert by_rule(evaluation, "max_flips").flips == 12
    assert evaluation.metrics[0].higher_is_better is False
    assert len(evaluation.flipped_to_wrong["error_rate"]) == 12

    better = scored({"error_rate": wrong_right([True] * 40)}, metrics={"error_rate": error_rate()})
    improved = evaluate_suite(better, baseline, {"error_rate": Rule(max_drop=1.0)}, Significance())
    assert improved.verdict is Verdict.IMPROVED
    check = by_rule(improved, "max_drop")
    assert check.status is CheckStatus.IMPROVED
    assert check.delta is not None and check.delta < 0
    assert "improved beyond max_drop" in check.message
    assert improved.flipped_to_right["error_rate"]


def test_an_insignificant_rise_of_an_error_rate_is_forgiven() -> None:
    base = pattern(30, 0.8, seed=1)
    accuracy_eval, error_eval = _pair(base, lose(base, 1), Rule(max_drop=1.0), Significance())
    assert by_rule(error_eval, "max_drop").status is CheckStatus.FORGIVEN
    assert "rose beyond" in by_rule(error_eval, "max_drop").message
    assert by_rule(accuracy_eval, "max_drop").status is CheckStatus.FORGIVEN


@settings(max_examples=40, deadline=None)
@given(
    base=st.lists(st.booleans(), min_size=4, max_size=40),
    data=st.data(),
    max_drop=st.sampled_from([None, 0.0, 2.0, 10.0]),
    max_drop_rel=st.sampled_from([None, 0.0, 0.05, 0.3]),
    max_flips=st.sampled_from([None, 0, 2]),
    significance=st.booleans(),
)
def test_an_error_rate_is_gated_as_the_mirror_of_accuracy(
    base: list[bool],
    data: st.DataObject,
    max_drop: float | None,
    max_drop_rel: float | None,
    max_flips: int | None,
    significance: bool,
) -> None:
    now = data.draw(st.lists(st.booleans(), min_size=len(base), max_size=len(base)))
    rule = Rule(max_drop=max_drop, max_drop_rel=max_drop_rel, max_flips=max_flips, slices=True)
    sig = Significance(resamples=200) if significance else None
    accuracy_eval, error_eval = _pair(base, now, rule, sig)
    if max_drop_rel is not None:
        # A fraction of the baseline is a fraction of a different number: compare the rest.
        accuracy_eval.checks = [c for c in accuracy_eval.checks if c.rule != "max_drop_rel"]
        error_eval.checks = [c for c in error_eval.checks if c.rule != "max_drop_rel"]
    assert [(c.rule, c.slice, c.status) for c in error_eval.checks] == [
        (c.rule, c.slice, c.status) for c in accuracy_eval.checks
    ]
    for mirror, plain in zip(error_eval.checks, accuracy_eval.checks, strict=True):
        if plain.delta is not None:
            assert mirror.delta is not None
            assert abs(mirror.delta + plain.delta) < 1e-9
        assert mirror.flips == plain.flips
    assert error_eval.flipped_to_wrong.get("error_rate") == accuracy_eval.flipped_to_wrong.get(
        "accuracy"
    )
    assert error_eval.flipped_to_right.get("error_rate") == accuracy_eval.flipped_to_right.get(
        "accuracy"
    )
