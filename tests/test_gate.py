"""The gate's decisions: thresholds, drops, significance, flips, slices, verdicts."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.errors import ConfigError
from goldgate.gate.rules import MetricScores, SuiteScores, combine_verdicts, evaluate_suite
from goldgate.gate.stats import as_stats_array
from goldgate.metrics.base import Metric, Stats
from goldgate.model.baseline import BaselineExample, BaselineMetric, SuiteBaseline
from goldgate.model.result import CheckStatus, Verdict
from tests.gate_metrics import accuracy, overlap, right_wrong


@dataclass(frozen=True)
class Rule:
    min: float | None = None
    max: float | None = None
    max_drop: float | None = None
    max_drop_rel: float | None = None
    max_flips: int | None = None
    slices: bool = False


@dataclass(frozen=True)
class Significance:
    resamples: int = 1000
    alpha: float = 0.05
    seed: int = 0


def scored(
    rows: dict[str, Sequence[Stats]],
    tags: Sequence[Sequence[str]] | None = None,
    metrics: dict[str, Metric[Any]] | None = None,
) -> SuiteScores:
    metrics = metrics or {"accuracy": accuracy(), "overlap": overlap()}
    n = len(next(iter(rows.values())))
    return SuiteScores(
        name="qa",
        ids=tuple(f"ex-{i:03d}" for i in range(n)),
        tags=tuple(tuple(t) for t in (tags or [()] * n)),
        metrics=tuple(
            MetricScores(spec, metrics[spec], f"sig-{spec}", as_stats_array(r, 2))
            for spec, r in rows.items()
        ),
    )


def baseline_of(suite: SuiteScores) -> SuiteBaseline:
    """A baseline blessed from a scored suite."""
    metrics = {}
    for item in suite.metrics:
        metrics[item.spec] = BaselineMetric(
            signature=item.signature,
            score=0.0,
            stat_names=list(item.metric.stat_names),
        )
    examples = {
        example_id: BaselineExample(
            digest="d",
            outputs=["o"],
            stats={item.spec: [item.stats[0, index].tolist()] for item in suite.metrics},
        )
        for index, example_id in enumerate(suite.ids)
    }
    return SuiteBaseline(
        golden_hash="h", goldens="g", samples=1, metrics=metrics, examples=examples
    )


def pattern(n: int, right: float, seed: int = 0) -> list[bool]:
    rng = random.Random(seed)
    return [rng.random() < right for _ in range(n)]


def lose(values: list[bool], count: int) -> list[bool]:
    """The same pattern with the first ``count`` right examples made wrong."""
    out = list(values)
    for index in [i for i, ok in enumerate(values) if ok][:count]:
        out[index] = False
    return out


def by_rule(evaluation: Any, rule: str, tag: str | None = None) -> Any:
    (check,) = [c for c in evaluation.checks if c.rule == rule and c.slice == tag]
    return check


def test_no_baseline_checks_only_absolute_bounds() -> None:
    suite = scored({"accuracy": right_wrong([True] * 7 + [False] * 3)})
    rules = {"accuracy": Rule(min=80.0, max_drop=1.0, max_flips=0)}
    evaluation = evaluate_suite(suite, None, rules, Significance())
    assert by_rule(evaluation, "min").status is CheckStatus.FAIL
    assert "70.00 is below the minimum 80.00" in by_rule(evaluation, "min").message
    assert by_rule(evaluation, "max_drop").status is CheckStatus.SKIPPED
    assert by_rule(evaluation, "max_flips").status is CheckStatus.SKIPPED
    assert evaluation.verdict is Verdict.REGRESSED
    summary = evaluation.metrics[0]
    assert summary.current == pytest.approx(70.0)
    assert summary.baseline is None and summary.delta is None and summary.interval is None
    assert evaluation.scores["accuracy"].tolist() == [100.0] * 7 + [0.0] * 3


def test_min_and_max_at_the_boundary_pass() -> None:
    suite = scored({"accuracy": right_wrong([True] * 8 + [False] * 2)})
    evaluation = evaluate_suite(suite, None, {"accuracy": Rule(min=80.0, max=80.0)}, None)
    assert [c.status for c in evaluation.checks] == [CheckStatus.PASS, CheckStatus.PASS]
    assert evaluation.verdict is Verdict.PASS
    over = evaluate_suite(suite, None, {"accuracy": Rule(max=79.0)}, None)
    assert over.verdict is Verdict.REGRESSED


def test_plain_thresholds_without_significance() -> None:
    base = pattern(40, 0.8)
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}))
    rules = {"accuracy": Rule(max_drop=2.0)}
    dropped = evaluate_suite(
        scored({"accuracy": right_wrong(lose(base, 1))}), baseline, rules, None
    )
    check = by_rule(dropped, "max_drop")
    assert check.status is CheckStatus.FAIL
    assert check.delta == pytest.approx(-2.5)
    assert check.interval is None and check.p_value is None
    assert dropped.verdict is Verdict.REGRESSED
    same = evaluate_suite(scored({"accuracy": right_wrong(base)}), baseline, rules, None)
    assert same.verdict is Verdict.PASS
    assert by_rule(same, "max_drop").delta == 0.0


def test_a_drop_of_exactly_max_drop_passes() -> None:
    base = [True] * 20
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}))
    current = scored({"accuracy": right_wrong(lose(base, 1))})  # -5 points
    evaluation = evaluate_suite(current, baseline, {"accuracy": Rule(max_drop=5.0)}, None)
    assert by_rule(evaluation, "max_drop").status is CheckStatus.PASS


def test_significance_forgives_noise_and_fails_a_real_drop() -> None:
    base = pattern(30, 0.8, seed=1)
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}))
    rules = {"accuracy": Rule(max_drop=1.0)}
    noisy = evaluate_suite(
        scored({"accuracy": right_wrong(lose(base, 1))}), baseline, rules, Significance()
    )
    check = by_rule(noisy, "max_drop")
    assert check.status is CheckStatus.FORGIVEN
    assert "forgiven as noise" in check.message and "95% CI" in check.message
    assert check.interval is not None and check.interval.low < 0 <= check.interval.high
    assert noisy.verdict is Verdict.PASS

    real = evaluate_suite(
        scored({"accuracy": right_wrong(lose(base, 8))}), baseline, rules, Significance()
    )
    check = by_rule(real, "max_drop")
    assert check.status is CheckStatus.FAIL
    assert check.p_value is not None and check.p_value < 0.05
    assert check.interval is not None and check.interval.high < 0
    assert real.verdict is Verdict.REGRESSED
    assert "qa: accuracy dropped beyond max_drop 1.00" in check.message


def test_improvement_needs_to_be_beyond_tolerance_and_significant() -> None:
    base = lose([True] * 30, 10)
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}))
    rules = {"accuracy": Rule(max_drop=1.0)}
    better = evaluate_suite(
        scored({"accuracy": right_wrong([True] * 30)}), baseline, rules, Significance()
    )
    assert by_rule(better, "max_drop").status is CheckStatus.IMPROVED
    assert better.verdict is Verdict.IMPROVED
    assert len(better.flipped_to_right["accuracy"]) == 10
    slightly = list(base)
    slightly[slightly.index(False)] = True
    wobble = evaluate_suite(
        scored({"accuracy": right_wrong(slightly)}), baseline, rules, Significance()
    )
    assert by_rule(wobble, "max_drop").status is CheckStatus.PASS
    assert wobble.verdict is Verdict.PASS
    # a failing check outranks an improvement elsewhere
    mixed = evaluate_suite(
        scored({"accuracy": right_wrong([True] * 30)}),
        baseline,
        {"accuracy": Rule(max_drop=1.0, min=100.5)},
        Significance(),
    )
    assert mixed.verdict is Verdict.REGRESSED


def test_max_drop_rel_is_a_fraction_of_the_baseline() -> None:
    base = [True] * 40  # baseline 100
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}))
    current = scored({"accuracy": right_wrong(lose(base, 1))})  # 97.5: -2.5 points
    loose = evaluate_suite(current, baseline, {"accuracy": Rule(max_drop_rel=0.03)}, None)
    assert by_rule(loose, "max_drop_rel").status is CheckStatus.PASS
    tight = evaluate_suite(current, baseline, {"accuracy": Rule(max_drop_rel=0.02)}, None)
    check = by_rule(tight, "max_drop_rel")
    assert check.status is CheckStatus.FAIL
    assert check.threshold == 0.02
    assert "2.00 points" in check.message


def test_max_flips_counts_right_to_wrong_examples() -> None:
    base = [True] * 10 + [False] * 10
    now = lose(base, 3)
    now[15] = True  # a flip the other way does not cancel a loss
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}))
    current = scored({"accuracy": right_wrong(now)})
    ok = evaluate_suite(current, baseline, {"accuracy": Rule(max_flips=3)}, None)
    assert by_rule(ok, "max_flips").status is CheckStatus.PASS
    assert by_rule(ok, "max_flips").flips == 3
    bad = evaluate_suite(current, baseline, {"accuracy": Rule(max_flips=2)}, None)
    check = by_rule(bad, "max_flips")
    assert check.status is CheckStatus.FAIL
    assert "ex-000, ex-001, ex-002" in check.message
    assert bad.flipped_to_wrong["accuracy"] == ["ex-000", "ex-001", "ex-002"]
    assert bad.flipped_to_right["accuracy"] == ["ex-015"]


def test_max_flips_on_a_graded_metric_is_a_config_error() -> None:
    suite = scored({"overlap": [(1.0, 2.0)] * 3})
    with pytest.raises(ConfigError, match="suite 'qa', gate 'overlap': max_flips"):
        evaluate_suite(suite, None, {"overlap": Rule(max_flips=1)}, None)


def test_slices_are_scored_and_gated_when_asked() -> None:
    base = [True] * 20
    tags = [("legal",) if i < 5 else ("misc",) for i in range(20)]
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}, tags))
    now = lose(base, 2)  # both losses in the legal slice: -40 points there, -10 overall
    current = scored({"accuracy": right_wrong(now)}, tags)

    plain = evaluate_suite(current, baseline, {"accuracy": Rule(max_drop=15.0)}, None)
    assert plain.verdict is Verdict.PASS
    assert [s.tag for s in plain.slices] == ["legal", "misc"]
    legal = plain.slices[0]
    assert legal.n_examples == 5
    assert legal.metrics[0].current == pytest.approx(60.0)
    assert legal.metrics[0].delta == pytest.approx(-40.0)

    sliced = evaluate_suite(current, baseline, {"accuracy": Rule(max_drop=15.0, slices=True)}, None)
    assert sliced.verdict is Verdict.REGRESSED
    check = by_rule(sliced, "max_drop", "legal")
    assert check.status is CheckStatus.FAIL
    assert check.id == "qa::accuracy::tag=legal::max_drop"
    assert by_rule(sliced, "max_drop", "misc").status is CheckStatus.PASS
    # suite checks come first, then slice checks
    assert sliced.checks[0].slice is None

    hidden = evaluate_suite(
        current, baseline, {"accuracy": Rule(max_drop=15.0)}, None, slices=False
    )
    assert hidden.slices == []


def test_a_metric_new_since_the_baseline_has_no_baseline() -> None:
    base = [True] * 10
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}))
    current = scored({"accuracy": right_wrong(base), "overlap": [(1.0, 2.0)] * 10})
    evaluation = evaluate_suite(
        current, baseline, {"overlap": Rule(max_drop=1.0)}, Significance(resamples=50)
    )
    assert by_rule(evaluation, "max_drop").status is CheckStatus.SKIPPED
    summaries = {m.metric: m for m in evaluation.metrics}
    assert summaries["accuracy"].baseline == 100.0
    assert summaries["overlap"].baseline is None
    assert summaries["overlap"].current == pytest.approx(50.0)


def test_the_same_inputs_give_the_same_result() -> None:
    base = pattern(50, 0.7, seed=3)
    tags = [("a",) if i % 3 else ("b",) for i in range(50)]
    baseline = baseline_of(scored({"accuracy": right_wrong(base)}, tags))
    current = scored({"accuracy": right_wrong(lose(base, 4))}, tags)
    rules = {"accuracy": Rule(max_drop=1.0, slices=True)}
    first = evaluate_suite(current, baseline, rules, Significance(resamples=200, seed=5))
    again = evaluate_suite(current, baseline, rules, Significance(resamples=200, seed=5))
    assert [c.model_dump() for c in first.checks] == [c.model_dump() for c in again.checks]
    assert [s.model_dump() for s in first.slices] == [s.model_dump() for s in again.slices]


def test_combine_verdicts() -> None:
    assert combine_verdicts([]) is Verdict.PASS
    assert combine_verdicts([Verdict.PASS, Verdict.IMPROVED]) is Verdict.IMPROVED
    assert combine_verdicts([Verdict.IMPROVED, Verdict.REGRESSED]) is Verdict.REGRESSED
    assert combine_verdicts([Verdict.REGRESSED, Verdict.ERROR]) is Verdict.ERROR


@settings(max_examples=60, deadline=None)
@given(
    data=st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=2, max_size=40),
    seed=st.integers(0, 1000),
)
def test_order_of_the_golden_file_does_not_matter(
    data: list[tuple[bool, bool, bool]], seed: int
) -> None:
    """Reordering examples (which keeps the golden hash) gives the same checks and slices."""
    now = [d[0] for d in data]
    was = [d[1] for d in data]
    tags = [("x",) if d[2] else ("y",) for d in data]
    baseline = baseline_of(scored({"accuracy": right_wrong(was)}, tags))
    rules = {"accuracy": Rule(max_drop=1.0, max_flips=0, slices=True)}
    significance = Significance(resamples=100, seed=seed)
    straight = evaluate_suite(
        scored({"accuracy": right_wrong(now)}, tags), baseline, rules, significance
    )

    permutation = list(range(len(data)))
    random.Random(seed).shuffle(permutation)
    ids = tuple(f"ex-{i:03d}" for i in permutation)
    shuffled = SuiteScores(
        name="qa",
        ids=ids,
        tags=tuple(tags[i] for i in permutation),
        metrics=(
            MetricScores(
                "accuracy",
                accuracy(),
                "sig-accuracy",
                as_stats_array(right_wrong([now[i] for i in permutation]), 2),
            ),
        ),
    )
    reordered = evaluate_suite(shuffled, baseline, rules, significance)
    assert [c.model_dump() for c in reordered.checks] == [c.model_dump() for c in straight.checks]
    assert [s.model_dump() for s in reordered.slices] == [s.model_dump() for s in straight.slices]
    assert reordered.verdict is straight.verdict
    if now == was:
        assert straight.verdict is Verdict.PASS


@pytest.mark.parametrize("tiled", [False, True])
def test_threads_measure_the_suite_and_slices_exactly_as_one_thread(
    tiled: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldgate.gate import stats

    if tiled:  # the large-set path, small enough for a test
        monkeypatch.setattr(stats, "_TILED_ABOVE", 50)
        monkeypatch.setattr(stats, "_TILE", 23)
    rng = random.Random(7)
    n = 240
    now = scored(
        {
            "accuracy": right_wrong([rng.random() < 0.7 for _ in range(n)]),
            "overlap": [(rng.random(), 1.0) for _ in range(n)],
        },
        tags=[
            [rng.choice("abc")] + ([rng.choice("de")] if rng.random() < 0.3 else [])
            for _ in range(n)
        ],
    )
    # Ids out of order and a baseline without some of them: groups are not contiguous runs.
    order = list(range(n))
    rng.shuffle(order)
    now = SuiteScores(
        name=now.name,
        ids=tuple(now.ids[i] for i in order),
        tags=tuple(now.tags[i] for i in order),
        metrics=tuple(
            MetricScores(m.spec, m.metric, m.signature, m.stats[:, order]) for m in now.metrics
        ),
    )
    then = scored(
        {
            "accuracy": right_wrong([rng.random() < 0.75 for _ in range(n)]),
            "overlap": [(rng.random(), 1.0) for _ in range(n)],
        }
    )
    blessed = baseline_of(then)
    for gone in ("ex-003", "ex-100", "ex-200"):
        del blessed.examples[gone]
    rules = {
        "accuracy": Rule(max_drop=1.0, max_flips=5, slices=True),
        "overlap": Rule(max_drop=1.0, slices=True),
    }
    one, three = (
        evaluate_suite(now, blessed, rules, Significance(resamples=200), jobs=jobs)
        for jobs in (1, 3)
    )
    assert len(one.slices) == 5
    assert [m.model_dump() for m in three.metrics] == [m.model_dump() for m in one.metrics]
    assert [s.model_dump() for s in three.slices] == [s.model_dump() for s in one.slices]
    assert [c.model_dump() for c in three.checks] == [c.model_dump() for c in one.checks]
    assert three.flipped_to_wrong == one.flipped_to_wrong and one.flipped_to_wrong["accuracy"]
    assert three.flipped_to_right == one.flipped_to_right
    assert one.metrics[0].interval is not None
    # Baseline scores by suite position (for result rows) agree with those by id.
    paired = one.baseline_scores["overlap"]
    for index, example_id in enumerate(now.ids):
        position = int(one.paired_at[index])
        if example_id in ("ex-003", "ex-100", "ex-200"):
            assert position == -1 and example_id not in paired
        else:
            assert paired.values_array[position] == paired[example_id]
            assert paired.position[example_id] == position
    assert one.scores["overlap"].shape == (n,)
