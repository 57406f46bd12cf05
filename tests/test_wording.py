"""How counts, p-values and small changes are written, the same in every message (issue 30)."""

from __future__ import annotations

import re

import pytest

from goldgate.gate.rules import evaluate_suite
from goldgate.model.result import CheckResult, CheckStatus
from goldgate.report.sentences import check_sentence
from goldgate.wording import change_decimals, p_is, p_value, plural
from tests.gate_metrics import accuracy, right_wrong
from tests.test_gate import Rule, Significance, baseline_of, by_rule, lose, pattern, scored


def test_plural_agrees_with_its_count() -> None:
    assert plural(1, "bless") == "1 bless"
    assert plural(2, "bless") == "2 blesses"
    assert plural(0, "example") == "0 examples"
    assert plural(1, "example") == "1 example"
    assert plural(1_204, "example") == "1,204 examples"
    assert plural(3, "retry", "retries") == "3 retries"
    assert plural(1, "retry", "retries") == "1 retry"


def test_one_p_value_formatter() -> None:
    assert p_value(0.0004) == "<0.001"
    assert p_value(0.0416) == "0.042"
    assert p_value(None) == "\u2014"
    assert p_is(0.0004) == "p < 0.001"
    assert p_is(0.001) == "p = 0.001"
    assert p_is(0.3) == "p = 0.300"


def test_a_change_is_shown_with_the_decimals_it_needs() -> None:
    assert change_decimals(6.0) == 2
    assert change_decimals(-0.01) == 2
    assert change_decimals(0.004) == 3
    assert change_decimals(-0.00004) == 5
    assert change_decimals(0.0) is None
    assert change_decimals(1e-12) is None


def _check(delta: float, status: CheckStatus, p: float | None = None) -> CheckResult:
    return CheckResult(
        suite="qa",
        metric="exact_match",
        rule="max_drop",
        threshold=0.0,
        status=status,
        message="",
        baseline=82.0,
        current=82.0 + delta,
        delta=delta,
        p_value=p,
    )


@pytest.mark.parametrize(
    ("delta", "status", "said"),
    [
        (0.0, CheckStatus.PASS, "unchanged (82.00 \u2192 82.00), within the 0.00 tolerance"),
        (1e-13, CheckStatus.PASS, "unchanged (82.00 \u2192 82.00), within the 0.00 tolerance"),
        (0.004, CheckStatus.PASS, "rose 0.004 points (82.000 \u2192 82.004), within the 0.00"),
        (-0.004, CheckStatus.FAIL, "fell 0.004 points (82.000 \u2192 81.996), more than the 0.00"),
        (-1.0, CheckStatus.FAIL, "fell 1.00 point (82.00 \u2192 81.00), more than the 0.00"),
        (-6.0, CheckStatus.FAIL, "fell 6.00 points (82.00 \u2192 76.00), more than the 0.00"),
    ],
)
def test_a_sentence_never_says_rose_zero_points(
    delta: float, status: CheckStatus, said: str
) -> None:
    sentence = check_sentence(_check(delta, status))
    assert sentence.startswith(said)
    assert "0.00 points" not in sentence


def test_the_p_value_reads_the_same_in_the_sentence_and_the_gates_message() -> None:
    # "significant (p = <0.001 < α 0.05)" in the report, "(p=0.000, ...)" in the terminal.
    sentence = check_sentence(_check(-6.0, CheckStatus.FAIL, p=0.0004), alpha=0.05)
    assert sentence.endswith("significant (p < 0.001 < \u03b1 0.05)")
    forgiven = check_sentence(_check(-6.0, CheckStatus.FORGIVEN, p=0.3), alpha=0.05)
    assert "not significantly (p = 0.300 \u2265 \u03b1 0.05)" in forgiven

    base = pattern(40, 0.7, seed=3)
    metrics = {"accuracy": accuracy()}
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}, metrics=metrics))
    worse = scored({"accuracy": right_wrong(lose(base, 12))}, metrics=metrics)
    rules = {"accuracy": Rule(max_drop=1.0)}
    check = by_rule(evaluate_suite(worse, baseline, rules, Significance()), "max_drop")
    assert check.p_value is not None
    assert re.search(r"\(p [=<] 0\.\d{3}, 95% CI \[", check.message), check.message
    assert "p=" not in check.message
