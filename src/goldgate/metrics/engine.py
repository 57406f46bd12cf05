"""Score many metrics over one corpus, preprocessing each text once per shared key."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

from goldgate.errors import GoldgateError, InputError, MetricError, describe_exception
from goldgate.metrics.base import Metric, Score, Signature, Stats, sum_stats
from goldgate.metrics.batch import Batch, BatchMetric, MetricContext
from goldgate.metrics.text_batch import TextBatch


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


def _validate(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> None:
    if len(candidates) != len(references):
        raise InputError(
            f"{len(candidates)} candidates but {len(references)} reference lists: "
            "every candidate needs its references"
        )
    if not candidates:
        raise InputError("nothing to score: the corpus is empty (no candidates)")
    # The common case checked by C-level passes; the loop below names what is wrong.
    if (
        set(map(type, candidates)) == {str}
        and set(map(type, references)) <= {list, tuple}
        and all(references)
        and set(map(type, chain.from_iterable(references))) == {str}
    ):
        return
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


#: Examples scored as one batch, and between two calls of ``score_corpus``'s ``advance``:
#: large enough that a batch's few NumPy calls cost little per example, small enough that a
#: batch's texts and n-gram arrays stay a few MB.
PROGRESS_CHUNK = 2000

#: Per metric, its statistics: rows of a batch as an ``(n, k)`` float64 array (from
#: ``Metric.batch_stats``) or as tuples (example by example), in order.
RowParts = list[list[Any]]


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
    reference_counts = [len(refs) for refs in references]
    batch_results: dict[int, MetricResult] = {}
    for index, (spec, metric) in enumerate(metrics):
        if isinstance(metric, BatchMetric):
            if context is not None:
                metric.bind(context)
            batch = metric.corpus_stats(Batch(candidates, references, inputs, ids, sample))
            notes = tuple(batch.notes) if batch.notes is not None else None
            _check_finite(spec, batch.rows)
            signature = metric.signature(reference_counts)
            batch_results[index] = MetricResult(spec, metric, tuple(batch.rows), signature, notes)
            if advance is not None:
                advance(len(candidates))
    others = [(i, pair) for i, pair in enumerate(metrics) if i not in batch_results]
    parts = score_rows([pair for _, pair in others], candidates, references, advance=advance)
    results = dict(batch_results)
    for (index, (spec, metric)), metric_parts in zip(others, parts, strict=True):
        rows = tuple(_as_tuples(metric_parts))
        _check_finite(spec, rows)
        results[index] = MetricResult(spec, metric, rows, metric.signature(reference_counts))
    return [results[index] for index in range(len(metrics))]


def stat_arrays(
    metrics: Sequence[tuple[str, Metric[Any]]],
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
) -> list[Any]:
    """Per metric, its statistics as one ``(n, k)`` float64 array, checked as ``score_corpus``
    checks them; no :class:`BatchMetric` among ``metrics``. Equal to ``score_corpus``'s rows."""
    import numpy as np

    _validate(candidates, references)
    arrays = []
    for (spec, _), parts in zip(metrics, score_rows(metrics, candidates, references), strict=True):
        try:
            blocks = [np.asarray(part, dtype=np.float64) for part in parts]
            array = np.concatenate(blocks) if len(blocks) > 1 else blocks[0]
            usable = array.ndim == 2
        except (TypeError, ValueError, OverflowError):  # ragged rows, or not numbers
            usable = False
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
            finite = usable and bool(np.isfinite(array.sum(axis=0)).all())
        if not finite:
            _check_finite(spec, _as_tuples(parts))  # names the example, as score_corpus does
            raise MetricError(f"metric {spec!r}: its statistics are not rows of numbers")
        arrays.append(array)
    return arrays


def _as_tuples(parts: list[Any]) -> list[Stats]:
    rows: list[Stats] = []
    for part in parts:
        rows.extend(part if isinstance(part, list) else map(tuple, part.tolist()))
    return rows


def score_rows(
    metrics: Sequence[tuple[str, Metric[Any]]],
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    advance: Callable[[int], None] | None = None,
) -> RowParts:
    """Statistics of metrics scored example by example (no :class:`BatchMetric`), unchecked.

    The corpus goes in batches of :data:`PROGRESS_CHUNK` examples. A metric with a
    ``batch_stats`` scores a batch at once; the others score each example from texts
    preprocessed once per batch and preprocess key. Either way an example's row does not
    depend on the batch it is in.
    """
    keys = [metric.preprocess_key() for _, metric in metrics]
    parts: RowParts = [[] for _ in metrics]
    for start in range(0, len(candidates), PROGRESS_CHUNK):
        end = start + PROGRESS_CHUNK
        chunk_candidates, chunk_references = candidates[start:end], references[start:end]
        batch = TextBatch(chunk_candidates, chunk_references)
        for index, (spec, metric) in enumerate(metrics):
            try:
                rows = metric.batch_stats(batch)
                if rows is None:
                    rows = _example_rows(metric, batch, keys[index])
            except Exception:
                # Found again example by example, which names the example that fails.
                rows = _failing_rows(spec, metric, chunk_candidates, chunk_references, start)
            parts[index].append(rows)
            if keys[index] not in keys[index + 1 :]:
                batch.release(keys[index])
            if advance is not None:
                advance(len(batch))
    return parts


def _example_rows(metric: Metric[Any], batch: TextBatch, key: Hashable) -> list[Stats]:
    """A batch's rows example by example, from its texts preprocessed once."""
    preprocess = metric.preprocess
    prepared = batch.shared(key, "prepared", lambda: [preprocess(t) for t in batch.texts])
    example_stats = metric.example_stats
    offsets, flat = batch.reference_offsets, batch.references
    return [
        example_stats(prepared[candidate], [prepared[r] for r in flat[lo:hi]])
        for candidate, lo, hi in zip(batch.candidates, offsets, offsets[1:], strict=False)
    ]


def _failing_rows(
    spec: str,
    metric: Metric[Any],
    candidates: Sequence[str],
    references: Sequence[Sequence[str]],
    start: int,
) -> list[Stats]:
    """Score example by example, raising MetricComputeError at the first example that fails."""
    prepared: dict[str, Any] = {}
    rows: list[Stats] = []

    def prep(text: str) -> Any:
        if text not in prepared:
            prepared[text] = metric.preprocess(text)
        return prepared[text]

    try:
        for candidate, refs in zip(candidates, references, strict=True):
            rows.append(metric.example_stats(prep(candidate), [prep(ref) for ref in refs]))
    except GoldgateError as exc:
        raise MetricComputeError(spec, start + len(rows), str(exc)) from None
    except Exception as exc:  # a user's metric may raise anything
        raise MetricComputeError(
            spec, start + len(rows), f"raised {describe_exception(exc)}"
        ) from exc
    return rows


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
