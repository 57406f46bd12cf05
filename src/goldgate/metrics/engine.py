"""Score many metrics over one corpus, preprocessing each text once per shared key."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from goldgate.errors import GoldgateError, InputError, MetricError, describe_exception
from goldgate.metrics.base import Metric, Score, Signature, Stats, sum_stats
from goldgate.metrics.batch import Batch, BatchMetric, MetricContext


class MetricComputeError(MetricError):
    """A metric failed on one example: it raised, or gave statistics that are not finite.

    ``index`` is the example's position in the corpus; a caller that knows the example's id
    rewrites the message with :meth:`naming`.
    """

    def __init__(self, spec: str, index: int, problem: str) -> None:
        self.spec = spec
        self.index = index
        self.problem = problem
        super().__init__(f"metric {spec!r}: {problem} (example {index + 1})")

    def __reduce__(self) -> tuple[Any, ...]:
        # Raised in a scoring worker and pickled back: rebuilt from its parts, not its message.
        return (MetricComputeError, (self.spec, self.index, self.problem))

    def naming(self, where: str) -> MetricError:
        """The same error, the example named by ``where`` (``suite 'qa', id 'q7'``)."""
        return MetricError(f"metric {self.spec!r}: {self.problem} ({where})")


@dataclass(frozen=True)
class MetricResult:
    """One metric over one corpus: per-example statistics plus everything derived from them."""

    spec: str
    metric: Metric[Any]
    stats: tuple[Stats, ...]
    signature: Signature
    #: a short text per example from metrics that explain themselves (a judge's rationale)
    notes: tuple[str | None, ...] | None = None

    def total(self, indices: Iterable[int] | None = None) -> list[float]:
        """Statistics summed over all examples, or over the given example indices."""
        rows = self.stats if indices is None else [self.stats[i] for i in indices]
        return sum_stats(rows, len(self.metric.stat_names))

    def corpus_score(self, indices: Iterable[int] | None = None) -> Score:
        """The corpus (or slice) score with its components."""
        total = self.total(indices)
        return Score(
            metric=self.spec,
            score=self.metric.score_stats(total),
            signature=str(self.signature),
            components=self.metric.components(total),
        )

    def per_example(self) -> list[float]:
        """Sentence-level scores in input order (0–100)."""
        return [self.metric.example_score(row) for row in self.stats]


class _Table(dict[str, Any]):
    """Preprocessed texts of one key; a miss runs ``preprocess`` once (hits stay in C)."""

    def __init__(self, preprocess: Any) -> None:
        super().__init__()
        self.preprocess = preprocess

    def __missing__(self, text: str) -> Any:
        value = self[text] = self.preprocess(text)
        return value


class _PreprocessCache:
    """Memoises ``metric.preprocess`` per preprocess key, shared across metrics."""

    def __init__(self) -> None:
        self._tables: dict[Hashable, _Table] = {}

    def function(self, metric: Metric[Any]) -> Any:
        key = metric.preprocess_key()
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = _Table(metric.preprocess)
        return table.__getitem__

    def release(self, key: Hashable) -> None:
        """Forget the texts of a key no later metric shares (n-gram tables are large)."""
        self._tables.pop(key, None)


def _validate(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    if len(candidates) != len(references):
        raise InputError(
            f"{len(candidates)} candidates but {len(references)} reference lists: "
            "every candidate needs its references"
        )
    if not candidates:
        raise InputError("nothing to score: the corpus is empty (no candidates)")
    for index, (candidate, refs) in enumerate(zip(candidates, references, strict=True)):
        if not isinstance(candidate, str):
            raise InputError(
                f"example {index + 1}: the candidate is {_kind(candidate)}, not a string"
            )
        # A bare string would be taken as a list of one-character references.
        if isinstance(refs, str) or not isinstance(refs, Sequence):
            raise InputError(
                f"example {index + 1}: the references are {_kind(refs)}, not a list of strings"
            )
        if len(refs) == 0:
            raise InputError(f"example {index + 1} has no references")
        for k, ref in enumerate(refs):
            if not isinstance(ref, str):
                raise InputError(
                    f"example {index + 1}: reference {k + 1} is {_kind(ref)}, not a string"
                )


def _kind(value: object) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


#: examples scored between two calls of ``score_corpus``'s ``advance``
PROGRESS_CHUNK = 2000


def score_corpus(
    metrics: Sequence[tuple[str, Metric[Any]]],
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    inputs: Sequence[Any] | None = None,
    ids: Sequence[str] | None = None,
    sample: int = 0,
    context: MetricContext | None = None,
    advance: Callable[[int], None] | None = None,
) -> list[MetricResult]:
    """Compute per-example statistics of every ``(spec, metric)`` over one corpus.

    ``references[i]`` holds the references of ``candidates[i]``; their number may vary.
    Metrics computed over the whole set (:class:`BatchMetric`: embeddings, a judge) also see
    the examples' ``inputs`` and ``ids`` and are bound to ``context`` when one is given.
    ``advance(n)`` (for a progress display) is told of every ``n`` examples scored by a
    metric, so the whole work is ``len(candidates) * len(metrics)``.
    """
    _validate(candidates, references)
    cache = _PreprocessCache()
    reference_counts = [len(refs) for refs in references]
    keys = [metric.preprocess_key() for _, metric in metrics]
    results = []
    for index, (spec, metric) in enumerate(metrics):
        if isinstance(metric, BatchMetric):
            if context is not None:
                metric.bind(context)
            batch = metric.corpus_stats(Batch(candidates, references, inputs, ids, sample))
            notes = tuple(batch.notes) if batch.notes is not None else None
            _check_finite(spec, batch.rows)
            signature = metric.signature(reference_counts)
            results.append(MetricResult(spec, metric, tuple(batch.rows), signature, notes))
            if advance is not None:
                advance(len(candidates))
            continue
        prep = cache.function(metric)
        example_stats = metric.example_stats
        computed: list[Stats] = []
        append = computed.append
        # One chunk, unless a progress display wants news every PROGRESS_CHUNK examples.
        step = PROGRESS_CHUNK if advance is not None else max(len(candidates), 1)
        try:
            for start in range(0, len(candidates), step):
                end = start + step
                for candidate, refs in zip(
                    candidates[start:end], references[start:end], strict=True
                ):
                    append(example_stats(prep(candidate), [prep(ref) for ref in refs]))
                if advance is not None:
                    advance(len(computed) - start)
        except GoldgateError as exc:
            raise MetricComputeError(spec, len(computed), str(exc)) from None
        except Exception as exc:  # a user's metric may raise anything
            raise MetricComputeError(
                spec, len(computed), f"raised {describe_exception(exc)}"
            ) from exc
        rows = tuple(computed)
        _check_finite(spec, rows)
        results.append(MetricResult(spec, metric, rows, metric.signature(reference_counts)))
        if keys[index] not in keys[index + 1 :]:
            cache.release(keys[index])
    return results


def _check_finite(spec: str, rows: Sequence[Stats]) -> None:
    """Refuse NaN, infinity and statistics whose sum overflows (a custom metric's mistakes).

    Every score, slice and bootstrap resample is a sum of these rows, and a NaN or infinity
    anywhere makes its column's sum NaN or infinite: checking the sums checks every row.
    """
    if not rows:
        return
    try:
        totals = sum_stats(rows)
    except (TypeError, ValueError) as exc:  # rows of unequal width, or not numbers
        raise MetricError(
            f"metric {spec!r}: its statistics are not rows of numbers ({exc})"
        ) from None
    if all(math.isfinite(total) for total in totals):
        return
    for index, row in enumerate(rows):
        if not all(math.isfinite(value) for value in row):
            raise MetricComputeError(
                spec, index, f"gave a statistic that is not a finite number ({list(row)!r})"
            )
    largest = max(range(len(rows)), key=lambda i: max(abs(v) for v in rows[i]))
    raise MetricComputeError(
        spec,
        largest,
        f"gave statistics too large to add up (the largest: {max(rows[largest], key=abs)!r})",
    )
