"""``Metric.example_scores``: every row's ``example_score`` at once, to the last bit.

The gate scores a million examples per metric through ``example_scores``; the built-in
metrics compute it with array arithmetic. Whatever the statistics, the floats must be the
very ones ``example_score`` gives row by row: compared here bit for bit (so ``-0.0`` against
``0.0`` or one ulp of difference fails), on generated statistics and on real data.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.errors import GoldgateError
from goldgate.gate.rules import example_scores
from goldgate.metrics.base import Metric, ratio_scores
from goldgate.metrics.engine import stat_arrays
from goldgate.metrics.ngram import bleu as bleu_module
from goldgate.metrics.ngram.bleu import BLEU, bleu_rows, compute_bleu
from goldgate.metrics.ngram.rouge import RougeL
from goldgate.metrics.registry import builtin_metric_names, create_metric
from tests.shared_data import DATA

FloatArray = npt.NDArray[np.float64]

#: Options that need something beyond the package itself (a model, an endpoint).
_NEEDS = {
    "embedding_similarity": {"model": "models/tiny"},
    "llm_judge": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "rubric": "r"},
}


def _metric(name: str, options: dict[str, Any] | None = None) -> Metric[Any]:
    try:
        return create_metric(name, {**_NEEDS.get(name, {}), **(options or {})})
    except GoldgateError as exc:  # METEOR without WordNet on this machine
        pytest.skip(f"{name}: {exc}")


def _row_by_row(metric: Metric[Any], stats: FloatArray) -> FloatArray:
    return np.array([metric.example_score(row) for row in stats.tolist()], dtype=np.float64)


def assert_same_bits(got: FloatArray, expected: FloatArray) -> None:
    assert got.dtype == np.float64
    assert got.shape == expected.shape
    mismatch = np.flatnonzero(got.view(np.uint64) != expected.view(np.uint64))
    assert not mismatch.size, [(int(i), got[i], expected[i]) for i in mismatch[:5]]


# Small counts hit every branch (zeros, ties, empty references); large and fractional ones
# the arithmetic (TER's mean reference length and ROUGE's P/R/F sums are not integers).
_value = st.one_of(
    st.integers(0, 4).map(float),
    st.integers(0, 10**6).map(float),
    st.floats(0, 1e9, allow_nan=False, allow_infinity=False),
)


def _stats(width: int) -> st.SearchStrategy[FloatArray]:
    rows = st.lists(st.lists(_value, min_size=width, max_size=width), max_size=25)
    return rows.map(lambda r: np.array(r, dtype=np.float64).reshape(len(r), width))


def _width(metric: Metric[Any]) -> int:
    return len(metric.stat_names)


_NAMES = builtin_metric_names()
_VARIANTS: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in _NAMES] + [
    ("bleu", {"smooth_method": "none"}),
    ("bleu", {"smooth_method": "floor"}),
    ("bleu", {"smooth_method": "floor", "smooth_value": 0.37}),
    ("bleu", {"smooth_method": "add-k"}),
    ("bleu", {"smooth_method": "add-k", "smooth_value": 2.5}),
    ("bleu", {"max_ngram_order": 1}),
    ("bleu", {"max_ngram_order": 6, "effective_order": True}),
    ("chrf", {"eps_smoothing": True}),
    ("chrf", {"beta": 1, "word_order": 2}),
    ("chrf++", {"eps_smoothing": True}),
    ("length_ratio", {"ref_length": "shortest"}),
]


@pytest.mark.parametrize(("name", "options"), _VARIANTS, ids=lambda v: str(v))
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_example_scores_equal_example_score_row_by_row(
    name: str, options: dict[str, Any], data: st.DataObject
) -> None:
    metric = _metric(name, options)
    stats = data.draw(_stats(_width(metric)))
    assert_same_bits(metric.example_scores(stats), _row_by_row(metric, stats))


@pytest.mark.parametrize("name", _NAMES)
def test_every_builtin_metric_scores_its_rows_with_arrays(name: str) -> None:
    # Not the row-by-row default: that one would pass the test above without being fast.
    metric = _metric(name)
    assert type(metric).example_scores is not Metric.example_scores


@settings(max_examples=200, deadline=None)
@given(
    stats=_stats(10),
    method=st.sampled_from(["none", "floor", "add-k", "exp"]),
    effective=st.booleans(),
)
def test_bleu_rows_is_compute_bleu_of_every_row(
    stats: FloatArray, method: str, effective: bool
) -> None:
    options: dict[str, Any] = {
        "max_ngram_order": 4,
        "smooth_method": method,
        "smooth_value": None,
        "effective_order": effective,
    }
    expected = np.array([compute_bleu(row, **options)[0] for row in stats.tolist()])
    assert_same_bits(bleu_rows(stats, **options), expected)


def _small_count_stats() -> FloatArray:
    """Precisions from every small count pair: thousands of distinct logarithms."""
    counts = np.arange(0, 41, dtype=np.float64)
    correct, total = np.meshgrid(counts, counts)
    n = correct.size
    stats = np.column_stack(
        [
            np.full(n, 37.0),
            np.full(n, 41.0),
            *(correct.ravel() for _ in range(4)),
            *(np.maximum(total.ravel(), correct.ravel()) for _ in range(4)),
        ]
    )
    stats[:, 3] = np.roll(stats[:, 3], 7)
    return stats


def test_bleu_rows_where_numpy_and_math_logs_could_disagree() -> None:
    # Thousands of distinct logarithms and exponentials, which ``bleu_rows`` takes from
    # ``math`` as ``compute_bleu`` does.
    stats = _small_count_stats()
    metric = BLEU(BLEU.Options())  # type: ignore[arg-type]
    assert_same_bits(metric.example_scores(stats), _row_by_row(metric, stats))


def _left_to_right(values: Any) -> float:
    """``sum`` as Python 3.11 adds floats: one ``+`` at a time."""
    total = 0
    for value in values:
        total += value
    return total


@pytest.mark.parametrize("method", ["none", "exp", "add-k"])
def test_bleu_rows_add_the_logs_with_the_interpreters_own_sum(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.12 made ``sum`` of floats compensated, and sacrebleu adds its logs with
    ``sum``: ``bleu_rows`` must call that very ``sum``, not add columns in its own way. Each
    manner of adding stands in for the builtin in turn (3.11's one ``+`` at a time, and a
    compensated one, ``math.fsum``, as 3.12's), so the test fails on every version when
    ``bleu_rows`` does not follow the interpreter."""
    stats = _small_count_stats()
    options: dict[str, Any] = {
        "max_ngram_order": 4,
        "smooth_method": method,
        "smooth_value": None,
        "effective_order": True,
    }
    got = {}
    for adder in (_left_to_right, math.fsum):
        monkeypatch.setattr(bleu_module, "sum", adder, raising=False)
        expected = np.array([compute_bleu(row, **options)[0] for row in stats.tolist()])
        got[adder] = expected
        assert_same_bits(bleu_rows(stats, **options), expected)
    differ = got[_left_to_right].view(np.uint64) != got[math.fsum].view(np.uint64)
    assert differ.any()  # the two manners of adding give other floats on these rows


def test_ratio_scores_follow_pythons_if() -> None:
    top = np.array([1.0, 2.0, 3.0, 0.0, np.nan, 5.0])
    bottom = np.array([2.0, 0.0, -0.0, 0.0, 1.0, np.nan])
    expected = [100.0 * t / b if b else 0.0 for t, b in zip(top, bottom, strict=True)]
    assert_same_bits(ratio_scores(top, bottom, 100.0), np.array(expected))


def test_an_empty_array_gives_no_scores() -> None:
    for name in ("bleu", "chrf", "rougeL", "exact_match", "ter", "length_ratio"):
        metric = _metric(name)
        scores = metric.example_scores(np.zeros((0, _width(metric))))
        assert scores.shape == (0,)
        assert scores.dtype == np.float64


class _HalvedRougeL(RougeL):
    """A plugin's subclass of a built-in metric that changes its formula."""

    def score_stats(self, stats: Sequence[float]) -> float:
        return super().score_stats(stats) / 2


class _OwnSentenceScore(RougeL):
    def example_score(self, stats: Sequence[float]) -> float:
        return 1.0 if stats[2] else 0.0


def test_a_subclass_that_changes_the_formula_is_scored_by_its_own_formula() -> None:
    stats = np.array([[0.5, 0.5, 0.5, 1.0], [0.0, 0.0, 0.0, 1.0]])
    for cls, expected in ((_HalvedRougeL, [25.0, 0.0]), (_OwnSentenceScore, [1.0, 0.0])):
        metric = cls(RougeL.Options())  # type: ignore[arg-type]
        assert metric.example_scores(stats).tolist() == expected


def test_a_plugin_with_only_example_score_is_scored_row_by_row() -> None:
    class Plugin(RougeL):
        def example_score(self, stats: Sequence[float]) -> float:
            return stats[0] * 3

    metric = Plugin(RougeL.Options())  # type: ignore[arg-type]
    assert metric.example_scores(np.array([[1.0, 0, 0, 1], [2.0, 0, 0, 1]])).tolist() == [3, 6]


@pytest.mark.parametrize("name", ["bleu", "chrf", "rouge1", "meteor", "token_f1"])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_samples_are_averaged_with_fsum_as_before(name: str, data: st.DataObject) -> None:
    metric = _metric(name)
    samples = data.draw(st.integers(1, 4))
    rows = data.draw(st.integers(0, 12))
    width = _width(metric)
    flat = data.draw(
        st.lists(_value, min_size=samples * rows * width, max_size=samples * rows * width)
    )
    stats = np.array(flat, dtype=np.float64).reshape(samples, rows, width)
    # What gate.example_scores computed before it had arrays.
    per_sample = [[metric.example_score(row) for row in stats[s].tolist()] for s in range(samples)]
    if samples == 1:
        expected = per_sample[0]
    else:
        expected = [math.fsum(column) / samples for column in zip(*per_sample, strict=True)]
    assert_same_bits(example_scores(metric, stats), np.array(expected, dtype=np.float64))


_REAL = [
    (
        "mt_wmt21_newstest2021_de-en.Online-B.jsonl",
        ["bleu", "sentence_bleu", "chrf", "chrf++", "ter"],
    ),
    ("mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl", ["bleu", "chrf"]),
    ("summ_xsum_maynez2020.jsonl", ["rouge1", "rouge2", "rougeL", "length_ratio"]),
    ("qa_squad_v1.1_dev.logreg-baseline.jsonl", ["exact_match", "token_f1", "bleu", "rougeL"]),
]


@pytest.mark.parametrize(("filename", "names"), _REAL)
def test_real_data_scores_equal_row_by_row(filename: str, names: list[str]) -> None:
    path = DATA / filename
    if not path.exists():
        pytest.skip(f"{path} is absent (real data lives beside the repository)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()][:1500]
    candidates = [row["candidate"] for row in rows]
    references = [row["references"] for row in rows]
    options = {"bleu": {"tokenize": "zh"}, "chrf": {}} if "zh" in filename else {}
    metrics = [(name, _metric(name, options.get(name))) for name in names]
    for (name, metric), stats in zip(
        metrics, stat_arrays(metrics, candidates, references), strict=True
    ):
        scores = metric.example_scores(stats)
        assert_same_bits(scores, _row_by_row(metric, stats))
        # The data exercises more than one branch (exact match has only two values).
        assert len(np.unique(scores)) > (1 if metric.binary else 10), name


def test_example_scores_of_the_wrong_shape_are_a_metric_error() -> None:
    from goldgate.errors import MetricError
    from goldgate.gate.rules import sample_scores

    class Broken(RougeL):
        def example_scores(self, stats: FloatArray) -> FloatArray:
            return np.zeros(len(stats) + 1)

    with pytest.raises(MetricError, match=r"Broken.example_scores gave an array of shape \(3,\)"):
        sample_scores(Broken(RougeL.Options()), np.zeros((2, 4)))  # type: ignore[arg-type]
