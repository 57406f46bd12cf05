"""BLEU and sentence BLEU, identical to sacrebleu 2.6 (``corpus_bleu`` and ``sentence_bleu``).

Per example the statistics are sacrebleu's ``[hyp_len, ref_len, m_1..m_N, t_1..t_N]``: the
closest reference length (ties go to the shorter one), n-gram matches clipped by the largest
count in any one reference, and the hypothesis n-gram totals. The corpus score is computed
once from their sums, with sacrebleu's arithmetic step for step so that even its float noise
(an identical sentence scores 100.00000000000004) comes out the same.

Each text is tokenised and its n-grams are counted once (``preprocess``, into packed int64
keys: see ``packed_ngrams``); ``bleu`` and ``sentence_bleu`` with the same tokenizer, case and
order share that work.

Beyond sacrebleu: the signature carries ``order:N`` when the n-gram order is not 4 (sacrebleu
prints nothing, yet the value changes), and a ``smooth_value`` for ``exp`` or ``none``, which
sacrebleu ignores, is refused as a mistake.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, ClassVar, Final, Literal

import numpy as np
from numpy.typing import NDArray

from goldgate.metrics.base import Metric, MetricOptions, OptionError, Stats, option, ratio_scores
from goldgate.metrics.ngram import batch_ngrams, batch_tokens
from goldgate.metrics.ngram.ngrams import Counts, clipped_matches, ngram_counts
from goldgate.metrics.ngram.packed_ngrams import Packed, pack, token_ids
from goldgate.metrics.ngram.packed_ngrams import clipped_matches as packed_clipped_matches
from goldgate.metrics.text.sacre_tokenizers import TokenizerName, get_tokenizer, tokenizer_signature
from goldgate.metrics.text_batch import TextBatch

SmoothMethod = Literal["none", "floor", "add-k", "exp"]

#: sacrebleu's default smoothing values (Chen and Cherry 2014); None: the method takes none.
SMOOTH_DEFAULTS: Final[dict[str, float | None]] = {
    "none": None,
    "floor": 0.1,
    "add-k": 1,
    "exp": None,
}
MAX_NGRAM_ORDER: Final = 4
#: A bound on n-gram orders so that a typo cannot make every example loop for minutes.
ORDER_LIMIT: Final = 100
#: sacrebleu's log of a zero precision.
_LOG_ZERO: Final = -9999999999


class BLEUOptions(MetricOptions):
    """sacrebleu's ``BLEU`` arguments (the tokenizers that need downloads are not offered;
    ``ja-mecab``/``ko-mecab`` need ``goldgate[ja]``/``goldgate[ko]``)."""

    tokenize: TokenizerName = "13a"
    lowercase: bool = False
    smooth_method: SmoothMethod = "exp"
    smooth_value: float | None = option(default=None, ge=0)
    max_ngram_order: int = option(default=MAX_NGRAM_ORDER, ge=1, le=ORDER_LIMIT)
    effective_order: bool = False

    def __post_init__(self) -> None:
        # sacrebleu silently ignores a value for 'exp' and 'none'; here it is almost surely a
        # mistake (a value meant for another method), so it is refused.
        method = self.smooth_method
        if self.smooth_value is not None and SMOOTH_DEFAULTS[method] is None:
            raise OptionError("smooth_value", f"smooth_method {method!r} takes no smooth_value")


class SentenceBLEUOptions(BLEUOptions):
    """``sacrebleu.sentence_bleu``'s arguments: effective order is on by default."""

    effective_order: bool = True


class BleuText:
    """One tokenised text: its length and its n-grams of orders 1..N.

    The n-grams are packed into int64 keys when the tokens' ids fit (see ``packed_ngrams``);
    otherwise, and for examples where any text is not packed, they are counted in dicts,
    which give the same numbers.
    """

    __slots__ = ("_counts", "length", "max_order", "packed", "tokens")

    def __init__(self, tokens: list[str], max_order: int) -> None:
        self.tokens = tokens
        self.length = len(tokens)
        self.max_order = max_order
        ids = token_ids(tokens, max_order)
        self.packed: Packed | None = None if ids is None else pack(ids, max_order)
        self._counts: list[Counts] | None = None

    def counts(self) -> list[Counts]:
        """N-gram counts as dicts, one per order (computed on first use)."""
        if self._counts is None:
            self._counts = ngram_counts(self.tokens, self.max_order)
        return self._counts


def closest_ref_len(hyp_len: int, ref_lens: Sequence[int]) -> int:
    """The reference length closest to the hypothesis length; ties go to the shorter one."""
    return min(ref_lens, key=lambda ref_len: (abs(hyp_len - ref_len), ref_len))


def bleu_stats(candidate: BleuText, references: Sequence[BleuText]) -> Stats:
    """sacrebleu's per-segment statistics ``[hyp_len, ref_len, m_1..m_N, t_1..t_N]``."""
    hyp_len, order = candidate.length, candidate.max_order
    ref_len = closest_ref_len(hyp_len, [ref.length for ref in references])
    total = [max(0, hyp_len - n) for n in range(order)]
    packed_refs = [ref.packed for ref in references if ref.packed is not None]
    if candidate.packed is not None and len(packed_refs) == len(references):
        correct = packed_clipped_matches(candidate.packed, packed_refs, order)
    else:
        ref_counts = [(ref.counts(), ref.length) for ref in references]
        correct = [
            clipped_matches(
                hyp, total[n], [(counts[n], max(0, length - n)) for counts, length in ref_counts]
            )
            for n, hyp in enumerate(candidate.counts())
        ]
    return (hyp_len, ref_len, *correct, *total)


def compute_bleu(
    stats: Sequence[float],
    *,
    max_ngram_order: int,
    smooth_method: str,
    smooth_value: float | None,
    effective_order: bool,
) -> tuple[float, list[float], float]:
    """(score, precisions, brevity penalty) from (summed) statistics, as sacrebleu computes them."""
    # sacrebleu's defaults keep their type (add-k's 1 is an int) so the sums below match.
    k: float = (SMOOTH_DEFAULTS[smooth_method] or 0) if smooth_value is None else smooth_value
    order = max_ngram_order
    correct = list(stats[2 : 2 + order])
    total = list(stats[2 + order : 2 + 2 * order])
    sys_len, ref_len = int(stats[0]), int(stats[1])

    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0

    precisions = [0.0] * order
    if not any(correct):
        return 0.0, precisions, bp

    smooth_mteval = 1.0
    eff_order = order
    for n in range(1, order + 1):
        if smooth_method == "add-k" and n > 1:
            correct[n - 1] += k
            total[n - 1] += k
        if total[n - 1] == 0:
            break
        if effective_order:
            eff_order = n
        if correct[n - 1] == 0:
            if smooth_method == "exp":
                smooth_mteval *= 2
                precisions[n - 1] = 100.0 / (smooth_mteval * total[n - 1])
            elif smooth_method == "floor":
                precisions[n - 1] = 100.0 * k / total[n - 1]
        else:
            precisions[n - 1] = 100.0 * correct[n - 1] / total[n - 1]

    # A list, summed left to right, exactly as sacrebleu does (the noise must match too).
    logs = [math.log(p) if p != 0.0 else _LOG_ZERO for p in precisions[:eff_order]]
    return bp * math.exp(sum(logs) / eff_order), precisions, bp


def _stat_names(order: int) -> tuple[str, ...]:
    orders = range(1, order + 1)
    return (
        "hyp_len",
        "ref_len",
        *(f"correct_{n}" for n in orders),
        *(f"total_{n}" for n in orders),
    )


class _BLEUBase(Metric[BLEUOptions]):
    """What BLEU and sentence BLEU share: tokenisation, n-gram counts, statistics, signature."""

    def __init__(self, options: BLEUOptions) -> None:
        super().__init__(options)
        self._tokenize = get_tokenizer(options.tokenize)

    def preprocess_key(self) -> Hashable:
        """Tokenizer, case and order: smoothing and effective order do not touch the counts."""
        opts = self.options
        return ("sacrebleu-word-ngrams", opts.tokenize, opts.lowercase, opts.max_ngram_order)

    def preprocess(self, text: str) -> BleuText:
        """Lowercase (optionally), strip the right end, tokenise, count n-grams."""
        if self.options.lowercase:
            text = text.lower()
        return BleuText(self._tokenize(text.rstrip()), self.options.max_ngram_order)

    def _batch_counts(self, batch: TextBatch) -> Any:
        """``bleu_stats`` of every example of a batch as an int64 array, or None (see
        ``batch_ngrams``)."""
        opts = self.options
        order = opts.max_ngram_order

        def tokens() -> tuple[Any, Any]:
            tokenize, lower = self._tokenize, opts.lowercase
            lines = [(t.lower() if lower else t).rstrip() for t in batch.texts]
            if opts.tokenize == "13a":
                # The 13a rules look at a character's neighbours only: one pass over the
                # lines joined by " \x00 " tokenises each line as it would alone.
                return batch_tokens.token_items(lines, tokenize, tokenize, padding=" ")
            return batch_ngrams.token_items([tokenize(line) for line in lines])

        items, offsets = batch.shared(self.preprocess_key(), "token-ids", tokens)
        chunk = batch_ngrams.batch_pairs(batch)
        found = batch_ngrams.pair_matches(items, offsets, chunk, order, clip=True)
        if found is None:
            return None
        lengths = np.diff(offsets)
        hyp_len, ref_len = lengths[chunk.candidates], lengths[chunk.references]
        # The closest reference length, the shorter on a tie: the least |h - r| · K + r.
        scale = int(lengths.max()) + 1
        distance = np.abs(hyp_len[chunk.example] - ref_len)
        closest = np.minimum.reduceat(distance * scale + ref_len, chunk.offsets[:-1])
        columns = [hyp_len, closest % scale, *found[:, :, 0]]
        columns += [np.maximum(hyp_len - n, 0) for n in range(order)]
        return np.stack(columns, axis=1)

    def _bleu(self, stats: Sequence[float], *, effective_order: bool) -> float:
        opts = self.options
        score, _, _ = compute_bleu(
            stats,
            max_ngram_order=opts.max_ngram_order,
            smooth_method=opts.smooth_method,
            smooth_value=opts.smooth_value,
            effective_order=effective_order,
        )
        return score

    def signature_fields(self) -> list[tuple[str, str]]:
        """sacrebleu's fields; ``order:N`` is added when the n-gram order is not 4."""
        opts = self.options
        smooth: str = opts.smooth_method
        default = SMOOTH_DEFAULTS[smooth]
        if default is not None:
            value = default if opts.smooth_value is None else opts.smooth_value
            smooth += f"[{value:.2f}]"
        fields = [
            ("case", "lc" if opts.lowercase else "mixed"),
            ("eff", "yes" if opts.effective_order else "no"),
            ("tok", tokenizer_signature(opts.tokenize)),
            ("smooth", smooth),
        ]
        if opts.max_ngram_order != MAX_NGRAM_ORDER:
            fields.append(("order", str(opts.max_ngram_order)))
        return fields


class BLEU(_BLEUBase):
    """Corpus BLEU (``sacrebleu.corpus_bleu`` / ``BLEU().corpus_score``)."""

    name: ClassVar[str] = "bleu"
    Options: ClassVar[type[MetricOptions]] = BLEUOptions

    stat_names: ClassVar[tuple[str, ...]] = _stat_names(MAX_NGRAM_ORDER)

    def __init__(self, options: BLEUOptions) -> None:
        super().__init__(options)
        if options.max_ngram_order != MAX_NGRAM_ORDER:
            # The statistics widen with the order; the class attribute describes the default.
            self.stat_names = _stat_names(options.max_ngram_order)  # type: ignore[misc]

    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example of a batch at once (see ``batch_ngrams``)."""
        counts = self._batch_counts(batch)
        return None if counts is None else counts.astype(np.float64)

    def example_stats(self, candidate: BleuText, references: Sequence[BleuText]) -> Stats:
        """``[hyp_len, ref_len, m_1..m_N, t_1..t_N]`` of one example."""
        return bleu_stats(candidate, references)

    def score_stats(self, stats: Sequence[float]) -> float:
        """Corpus BLEU from summed statistics."""
        return self._bleu(stats, effective_order=self.options.effective_order)

    def example_score(self, stats: Sequence[float]) -> float:
        """``sacrebleu.sentence_bleu`` of one example: effective order on, other options kept."""
        return self._bleu(stats, effective_order=True)

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        """Precisions (0–100), brevity penalty, lengths and their ratio, raw n-gram counts."""
        opts = self.options
        order = opts.max_ngram_order
        _, precisions, bp = compute_bleu(
            stats,
            max_ngram_order=order,
            smooth_method=opts.smooth_method,
            smooth_value=opts.smooth_value,
            effective_order=opts.effective_order,
        )
        sys_len, ref_len = int(stats[0]), int(stats[1])
        return {
            "precisions": precisions,
            "bp": bp,
            "sys_len": sys_len,
            "ref_len": ref_len,
            "ratio": sys_len / ref_len if ref_len else 0,
            "counts": [int(c) for c in stats[2 : 2 + order]],
            "totals": [int(t) for t in stats[2 + order : 2 + 2 * order]],
        }

    def example_scores(self, stats: NDArray[np.float64]) -> NDArray[np.float64]:
        """Sentence BLEU of every row (see ``bleu_rows``)."""
        if self._scalar_scores_replaced(BLEU):
            return super().example_scores(stats)
        opts = self.options
        return bleu_rows(
            stats,
            max_ngram_order=opts.max_ngram_order,
            smooth_method=opts.smooth_method,
            smooth_value=opts.smooth_value,
            effective_order=True,
        )


class SentenceBLEU(_BLEUBase):
    """Mean of ``sacrebleu.sentence_bleu`` over the examples.

    Its statistics are ``(sentence BLEU, 1)`` per example, so sums over any slice or resample
    give that slice's mean; the example's raw n-gram statistics are not kept.
    """

    name: ClassVar[str] = "sentence_bleu"
    Options: ClassVar[type[MetricOptions]] = SentenceBLEUOptions
    stat_names: ClassVar[tuple[str, ...]] = ("score_sum", "count")

    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example of a batch: its statistics at once, then each one's sentence BLEU."""
        counts = self._batch_counts(batch)
        if counts is None:
            return None
        effective = self.options.effective_order
        return [(self._bleu(row, effective_order=effective), 1) for row in counts.tolist()]

    def example_stats(self, candidate: BleuText, references: Sequence[BleuText]) -> Stats:
        """``(sentence BLEU, 1)``."""
        stats = bleu_stats(candidate, references)
        return (self._bleu(stats, effective_order=self.options.effective_order), 1)

    def score_stats(self, stats: Sequence[float]) -> float:
        """The mean sentence BLEU (0 for no examples)."""
        return stats[0] / stats[1] if stats[1] else 0.0

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        """How many sentences the mean is over."""
        return {"count": int(stats[1])}

    def example_scores(self, stats: NDArray[np.float64]) -> NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(SentenceBLEU):
            return super().example_scores(stats)
        return ratio_scores(stats[:, 0], stats[:, 1])


def bleu_rows(
    stats: NDArray[np.float64],
    *,
    max_ngram_order: int,
    smooth_method: str,
    smooth_value: float | None,
    effective_order: bool,
) -> NDArray[np.float64]:
    """``compute_bleu``'s score of every row of an ``(n, k)`` array, to the last bit.

    The arithmetic is ``compute_bleu``'s, operation for operation, on columns; only the
    logarithms and exponentials are Python's own ``math.log`` and ``math.exp`` (NumPy's may
    round differently in the last place), called once per value rather than once per row.
    """
    k: float = (SMOOTH_DEFAULTS[smooth_method] or 0) if smooth_value is None else smooth_value
    order, rows = max_ngram_order, stats.shape[0]
    correct = [stats[:, 2 + n].copy() for n in range(order)]
    total = [stats[:, 2 + order + n].copy() for n in range(order)]
    # int(): truncated toward zero (the counts are whole numbers anyway).
    sys_len, ref_len = np.trunc(stats[:, 0]), np.trunc(stats[:, 1])

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        short = sys_len < ref_len
        bp = np.ones(rows)
        shrink = short & (sys_len > 0)
        bp[short & ~(sys_len > 0)] = 0.0
        bp[shrink] = _math_map(math.exp, 1 - ref_len[shrink] / sys_len[shrink])
        scored = np.zeros(rows, dtype=bool)
        for column in correct:
            scored |= column != 0  # any(correct): NaN counts, as it is truthy

        precisions = [np.zeros(rows) for _ in range(order)]
        smooth_mteval = np.ones(rows)
        eff_order = np.full(rows, order, dtype=np.int64)
        alive = np.ones(rows, dtype=bool)
        for n in range(1, order + 1):
            c, t = correct[n - 1], total[n - 1]
            if smooth_method == "add-k" and n > 1:
                c += k
                t += k
            alive &= t != 0
            if effective_order:
                eff_order[alive] = n
            zero = alive & (c == 0)
            if smooth_method == "exp":
                smooth_mteval[zero] *= 2
                precisions[n - 1][zero] = 100.0 / (smooth_mteval[zero] * t[zero])
            elif smooth_method == "floor":
                precisions[n - 1][zero] = 100.0 * k / t[zero]
            hit = alive & (c != 0)
            precisions[n - 1][hit] = 100.0 * c[hit] / t[hit]

        logs = np.full((rows, order), float(_LOG_ZERO))
        for n in range(order):
            p = precisions[n]
            positive = scored & (p != 0.0)  # compute_bleu returns before its logs otherwise
            logs[positive, n] = _math_map(math.log, p[positive])
        log_sum = np.zeros(rows)
        log_sum[scored] = _log_sums(logs[scored], eff_order[scored])
        mean = np.zeros(rows)
        mean[scored] = _math_map(math.exp, log_sum[scored] / eff_order[scored])
        return np.where(scored, bp * mean, 0.0)


def _log_sums(logs: NDArray[np.float64], eff_order: NDArray[np.int64]) -> NDArray[np.float64]:
    """Each row's first ``eff_order`` logs added by the builtin ``sum`` over a list, as
    ``compute_bleu`` and sacrebleu add them.

    Python 3.12 made ``sum`` of floats compensated (Neumaier), so adding the columns left to
    right (as NumPy does) differs from sacrebleu in the last bits there: calling the
    interpreter's own ``sum`` on the same list shares its rounding on every version. A zero
    precision's log is sacrebleu's int, as in ``compute_bleu``'s list (``sum`` adds an int in
    its own way).
    """
    sums = np.zeros(len(logs))
    zero = float(_LOG_ZERO)
    for width in np.unique(eff_order).tolist():
        rows = eff_order == width
        block = logs[rows, :width]
        plain = ~(block == zero).any(axis=1)
        values = np.empty(len(block))
        values[plain] = np.fromiter(map(sum, block[plain].tolist()), np.float64, int(plain.sum()))
        values[~plain] = [
            sum([_LOG_ZERO if v == zero else v for v in row]) for row in block[~plain].tolist()
        ]
        sums[rows] = values
    return sums


def _math_map(function: Any, values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``function`` (a ``math`` one) of every value, as float64: called once per distinct
    value (precisions of short texts take few), the same floats as calling it on each."""
    distinct, inverse = np.unique(values, return_inverse=True)
    mapped = np.fromiter(map(function, distinct.tolist()), dtype=np.float64, count=len(distinct))
    return mapped[inverse.reshape(values.shape)]
