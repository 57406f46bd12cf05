"""Chunked and multi-process scoring give exactly the single-pass statistics, for every metric."""

from __future__ import annotations

import itertools
import os
import random
import signal
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from goldgate.errors import MetricError
from goldgate.execution.pool import (
    ScoringWorkerError,
    resolve_jobs,
    score_arrays,
    score_chunks,
    score_chunks_compact,
)
from goldgate.metrics.base import Metric
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import FunctionMetric, builtin_metric_names, metric_from_spec
from goldgate.model.compact_stats import CompactStats


def _plain_builtins() -> list[str]:
    """Built-in metrics that need no options and score texts alone (not batch metrics)."""
    from goldgate.errors import MetricError
    from goldgate.metrics.batch import BatchMetric

    names = []
    for name in builtin_metric_names():
        try:
            metric = metric_from_spec(name)
        except MetricError:  # needs a model or another option to exist at all
            continue
        if not isinstance(metric, BatchMetric):
            names.append(name)
    return names


# Every built-in metric, plus the settings that change how texts are preprocessed.
SPECS = [
    *_plain_builtins(),
    "bleu:tokenize=intl,lowercase=true",
    "bleu:tokenize=char,smooth_method=floor",
    "chrf:whitespace=true,lowercase=true",
    "rougeL:use_stemmer=true",
    "rougeLsum:use_stemmer=true",
    "rouge2:tokenizer=unicode",
    "exact_match:normalizer=strict",
    "token_f1:normalizer=lower",
]

WORDS = [
    "the",
    "a",
    "cat",
    "sat",
    "on",
    "mat",
    "Zürich",
    "running",
    "ran",
    "dogs",
    "東京",
    "über",
    "naïve",
    "42",
    "3.5",
    ",",
    ".",
    "!",
    "?",
    "don't",
]


def _corpus(n: int, seed: int = 7) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)

    def text() -> str:
        words = rng.choices(WORDS, k=rng.randint(0, 14))
        if words and rng.random() < 0.2:
            words.insert(rng.randint(0, len(words)), "\n")  # rougeLsum's sentence breaks
        return " ".join(words)

    candidates = [text() for _ in range(n)]
    references = [[text() or "x" for _ in range(rng.randint(1, 3))] for _ in range(n)]
    # Repeated texts exercise the preprocessing cache across chunk boundaries.
    candidates[5] = candidates[6] = candidates[40]
    references[9] = references[10] = list(references[41])
    return candidates, references


def _metrics() -> list[tuple[str, Metric[Any]]]:
    return [(spec, metric_from_spec(spec)) for spec in SPECS]


def _expected(
    metrics: list[tuple[str, Metric[Any]]], cands: list[str], refs: list[list[str]]
) -> list[np.ndarray]:
    results = score_corpus(metrics, cands, refs)
    return [np.asarray(result.stats, dtype=np.float64) for result in results]


def _assert_identical(got: Sequence[np.ndarray], expected: Sequence[np.ndarray]) -> None:
    assert len(got) == len(expected)
    for spec, array, want in zip(SPECS, got, expected, strict=True):
        assert array.dtype == np.float64
        assert array.shape == want.shape, spec
        # Bit for bit, not approximately: sums and bootstraps must not move.
        assert array.tobytes() == want.tobytes(), spec


@pytest.mark.parametrize("chunk_size", [1, 2, 7, 40, 41, 82, 83, 1000])
def test_chunks_in_one_process_equal_one_pass(chunk_size: int) -> None:
    metrics = _metrics()
    cands, refs = _corpus(83)
    expected = _expected(metrics, cands, refs)
    got = score_arrays(metrics, cands, refs, jobs=1, chunk_size=chunk_size)
    _assert_identical(got, expected)


def test_uneven_streamed_chunks_equal_one_pass() -> None:
    metrics = _metrics()
    cands, refs = _corpus(60, seed=3)
    expected = _expected(metrics, cands, refs)
    cuts = [0, 1, 1, 13, 14, 37, 59, 60]  # an empty chunk too
    chunks = [(cands[a:b], refs[a:b]) for a, b in itertools.pairwise(cuts)]
    for total in (None, 60):
        _assert_identical(score_chunks(metrics, iter(chunks), total=total, jobs=1), expected)


def test_two_processes_equal_one_pass() -> None:
    metrics = _metrics()
    cands, refs = _corpus(101, seed=11)
    expected = _expected(metrics, cands, refs)
    got = score_arrays(metrics, cands, refs, jobs=2, chunk_size=13)
    _assert_identical(got, expected)


def squared_length(candidate: str, references: list[str]) -> float:
    """A user's metric, importable by the workers."""
    return float(len(candidate) % 7) * 10.0


def test_a_users_function_metric_travels_to_workers_and_a_local_one_stays() -> None:
    cands, refs = _corpus(45)
    importable = FunctionMetric("sq", squared_length, FunctionMetric.Options())
    local = FunctionMetric("local", lambda c, r: float(len(r)), FunctionMetric.Options())
    pairs: list[tuple[str, Metric[Any]]] = [("sq", importable), ("local", local)]
    expected = [np.asarray(r.stats) for r in score_corpus(pairs, cands, refs)]
    # The lambda cannot be pickled: the whole corpus is scored in this process instead.
    got = score_arrays(pairs, cands, refs, jobs=2, chunk_size=4)
    assert [a.tolist() for a in got] == [a.tolist() for a in expected]
    got = score_arrays(pairs[:1], cands, refs, jobs=2, chunk_size=4)
    assert got[0].tolist() == expected[0].tolist()


def failing(candidate: str, references: list[str]) -> float:
    if candidate == "boom":
        raise MetricError("custom metric 'failing' cannot score 'boom'")
    return 1.0


def test_an_error_in_a_worker_is_raised_here() -> None:
    cands = ["a"] * 20 + ["boom"] + ["b"] * 5
    refs = [["a"]] * len(cands)
    metric = FunctionMetric("failing", failing, FunctionMetric.Options())
    with pytest.raises(MetricError, match="cannot score 'boom'"):
        score_arrays([("failing", metric)], cands, refs, jobs=2, chunk_size=3)


def suicidal(candidate: str, references: list[str]) -> float:
    if candidate == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return 1.0


def test_a_killed_worker_is_a_clear_error_not_a_partial_score() -> None:
    cands = ["a"] * 10 + ["die"] + ["b"] * 10
    refs = [["a"]] * len(cands)
    metric = FunctionMetric("suicidal", suicidal, FunctionMetric.Options())
    with pytest.raises(ScoringWorkerError, match="worker process died"):
        score_arrays([("suicidal", metric)], cands, refs, jobs=2, chunk_size=2)


def test_metrics_that_hold_unpicklable_helpers_are_rebuilt_from_options() -> None:
    import pickle

    metric = metric_from_spec("rougeL:use_stemmer=true")
    clone = pickle.loads(pickle.dumps(metric))
    assert type(clone) is type(metric) and clone.options == metric.options


def test_jobs_default_to_every_core_only_on_large_sets() -> None:
    assert resolve_jobs(None, 10) == 1
    assert resolve_jobs(3, 10) == 3
    assert resolve_jobs(None, 1_000_000) >= 1


def test_an_empty_corpus_gives_empty_arrays() -> None:
    metrics = _metrics()[:3]
    got = score_arrays(metrics, [], [], jobs=1)
    assert [a.shape for a in got] == [(0, len(m.stat_names)) for _, m in metrics]


def bad_at_17(candidate: str, references: list[str]) -> float:
    if candidate == "bad":
        raise ValueError("no")
    return 1.0


def huge(candidate: str, references: list[str]) -> float:
    return 1e308


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_example_is_named_by_its_corpus_position(jobs: int) -> None:
    from goldgate.metrics.engine import MetricComputeError

    cands = ["ok"] * 30
    cands[17] = "bad"
    refs = [["x"]] * 30
    metric = FunctionMetric("bad_at_17", bad_at_17, FunctionMetric.Options())
    with pytest.raises(MetricComputeError) as caught:
        score_arrays([("m", metric)], cands, refs, jobs=jobs, chunk_size=4)
    assert caught.value.index == 17
    # sums that overflow only across chunks are refused like one pass refuses them
    big = FunctionMetric("huge", huge, FunctionMetric.Options())
    with pytest.raises(MetricComputeError, match="too large to add up"):
        score_arrays([("m", big)], cands, refs, jobs=1, chunk_size=4)


def _assert_compact(got: Sequence[CompactStats], expected: Sequence[np.ndarray]) -> None:
    assert len(got) == len(expected)
    for spec, stats, want in zip(SPECS, got, expected, strict=True):
        compact = CompactStats.of(want[np.newaxis])
        assert stats.shape == compact.shape, spec
        assert [c.dtype for c in stats.columns] == [c.dtype for c in compact.columns], spec
        assert stats.expand().tobytes() == want[np.newaxis].tobytes(), spec


@pytest.mark.parametrize(("jobs", "cuts"), [(1, [0, 1, 1, 13, 14, 37, 59, 60]), (2, None)])
def test_statistics_compacted_chunk_by_chunk_equal_those_of_one_pass(
    jobs: int, cuts: list[int] | None
) -> None:
    metrics = _metrics()
    cands, refs = _corpus(60, seed=5)
    expected = _expected(metrics, cands, refs)
    cuts = cuts or [*range(0, 60, 7), 60]
    chunks = [(cands[a:b], refs[a:b]) for a, b in itertools.pairwise(cuts)]
    _assert_compact(score_chunks_compact(metrics, iter(chunks), total=60, jobs=jobs), expected)
    empty = score_chunks_compact(metrics[:2], iter([]), total=0)
    assert [s.shape for s in empty] == [(1, 0, len(m.stat_names)) for _, m in metrics[:2]]


def test_compacted_scoring_names_failures_and_refuses_sums_too_large() -> None:
    from goldgate.metrics.engine import MetricComputeError

    cands = ["ok"] * 30
    cands[17] = "bad"
    chunks = [(cands[a : a + 4], [["x"]] * len(cands[a : a + 4])) for a in range(0, 30, 4)]
    metric = FunctionMetric("bad_at_17", bad_at_17, FunctionMetric.Options())
    with pytest.raises(MetricComputeError) as caught:
        score_chunks_compact([("m", metric)], iter(chunks), total=30)
    assert caught.value.index == 17
    big = FunctionMetric("huge", huge, FunctionMetric.Options())
    singles = [([text], [["x"]]) for text in ["ok"] * 30]  # each chunk's own sum is finite
    with pytest.raises(MetricComputeError, match="too large to add up"):
        score_chunks_compact([("m", big)], iter(singles), total=30)
    with pytest.raises(ValueError, match="expected 31"):
        score_chunks_compact([("m", metric)], iter(chunks[:1]), total=31)
