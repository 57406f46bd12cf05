"""chrF and chrF++, identical to sacrebleu 2.6's ``CHRF`` (Popović 2015, 2017).

Per example and per order (character orders first, then word orders) the statistics are
sacrebleu's ``[hyp, ref, match]`` against the reference with the best sentence-level F (strict
``>``: the first one wins a tie). ``hyp`` is 0 for an order in which that reference has no
n-grams. The corpus score comes from the summed statistics, the example score from the
example's own, each with sacrebleu's arithmetic.

Beyond sacrebleu: the signature carries ``beta:B`` when beta is not 2 (sacrebleu names the
metric chrF3 but prints nothing), and option names are sacrebleu's ``CHRF`` arguments
(``whitespace``, not ``corpus_chrf``'s ``remove_whitespace``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, ClassVar, Final

import numpy as np
from numpy.typing import NDArray

from goldgate.metrics.base import Metric, MetricOptions, OptionError, Stats, option
from goldgate.metrics.ngram import batch_ngrams, batch_tokens
from goldgate.metrics.ngram.ngrams import Counts, matches, ngram_counts
from goldgate.metrics.ngram.packed_ngrams import (
    Ints,
    Packed,
    character_ids,
    clipped_matches,
    pack,
)
from goldgate.metrics.text_batch import TextBatch

CHAR_ORDER: Final = 6
WORD_ORDER: Final = 0
BETA: Final = 2
#: A bound on n-gram orders and beta so that a typo cannot hang or overflow a run.
ORDER_LIMIT: Final = 100
BETA_LIMIT: Final = 100
#: chrF++.py's floor for an undefined precision, recall or F (sacrebleu's ``eps_smoothing``).
_EPS: Final = 1e-16
# string.punctuation: the characters chrF++ splits off the start or end of a word.
_PUNCTUATION: Final = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


class CHRFOptions(MetricOptions):
    """sacrebleu's ``CHRF`` arguments."""

    char_order: int = option(default=CHAR_ORDER, ge=0, le=ORDER_LIMIT)
    word_order: int = option(default=WORD_ORDER, ge=0, le=ORDER_LIMIT)
    beta: int = option(default=BETA, ge=0, le=BETA_LIMIT)
    lowercase: bool = False
    whitespace: bool = False
    eps_smoothing: bool = False

    def __post_init__(self) -> None:
        if self.char_order == 0 and self.word_order == 0:
            raise OptionError("word_order", "char_order and word_order cannot both be 0")


class CHRFPlusPlusOptions(CHRFOptions):
    """chrF++: word bigrams as well (word order 2)."""

    word_order: int = option(default=2, ge=0, le=ORDER_LIMIT)


def _chars(text: str, options: CHRFOptions) -> str:
    """The characters chrF counts: lowercased on request, whitespace removed unless kept."""
    if options.lowercase:
        text = text.lower()
    return text if options.whitespace else "".join(text.split())


def split_punctuation(text: str) -> list[str]:
    """chrF++'s words: one trailing, else one leading, punctuation character split off.

    Like sacrebleu (its issue #124), ``(hi)`` becomes ``(hi`` and ``)``.
    """
    words: list[str] = []
    for word in text.split():
        if len(word) == 1:
            words.append(word)
        elif word[-1] in _PUNCTUATION:
            words += (word[:-1], word[-1])
        elif word[0] in _PUNCTUATION:
            words += (word[0], word[1:])
        else:
            words.append(word)
    return words


class ChrfText:
    """One text preprocessed for chrF: its character n-grams and word n-grams with totals.

    Character n-grams are packed into int64 keys when the text's characters fit (see
    ``packed_ngrams``); otherwise, and for pairs where either side is not packed, they are
    counted in dicts, which give the same numbers.
    """

    __slots__ = (
        "_char_counts",
        "char_order",
        "char_totals",
        "chars",
        "packed",
        "word_counts",
        "word_totals",
    )

    def __init__(self, text: str, options: CHRFOptions) -> None:
        self.chars = _chars(text, options)
        if options.lowercase:
            text = text.lower()
        self.char_order = order = options.char_order
        self.char_totals = [max(0, len(self.chars) - n) for n in range(order)]
        self.packed: Packed | None = None
        self._char_counts: list[Counts] | None = None
        if order:
            ids = character_ids(self.chars, order)
            if ids is not None:
                self.packed = pack(ids, order)
        self.word_counts: list[Counts] = []
        self.word_totals: list[int] = []
        if options.word_order:
            words = split_punctuation(text)
            self.word_counts = ngram_counts(words, options.word_order)
            self.word_totals = [max(0, len(words) - n) for n in range(options.word_order)]

    def char_counts(self) -> list[Counts]:
        """Character n-gram counts as dicts (computed on first use)."""
        if self._char_counts is None:
            self._char_counts = ngram_counts(self.chars, self.char_order)
        return self._char_counts


def _match_stats(candidate: ChrfText, reference: ChrfText) -> list[int]:
    """``[hyp, ref, match]`` per order; hyp is 0 where the reference has no n-grams."""
    if not candidate.char_order:
        char_matches: list[int] = []
    elif candidate.packed is not None and reference.packed is not None:
        char_matches = clipped_matches(candidate.packed, [reference.packed], candidate.char_order)
    else:
        char_matches = [
            matches(hyp, hyp_total, ref, ref_total)
            for hyp, hyp_total, ref, ref_total in zip(
                candidate.char_counts(),
                candidate.char_totals,
                reference.char_counts(),
                reference.char_totals,
                strict=True,
            )
        ]
    word_matches = [
        matches(hyp, hyp_total, ref, ref_total)
        for hyp, hyp_total, ref, ref_total in zip(
            candidate.word_counts,
            candidate.word_totals,
            reference.word_counts,
            reference.word_totals,
            strict=True,
        )
    ]
    stats: list[int] = []
    for hyp_total, ref_total, match in zip(
        candidate.char_totals + candidate.word_totals,
        reference.char_totals + reference.word_totals,
        char_matches + word_matches,
        strict=True,
    ):
        stats += (hyp_total, ref_total, match) if ref_total else (0, 0, 0)
    return stats


def f_score(stats: Sequence[float], beta: int, eps_smoothing: bool) -> float:
    """sacrebleu's ``CHRF._compute_f_score`` (0–100) over ``[hyp, ref, match]`` triples."""
    factor = beta**2
    orders = len(stats) // 3
    if eps_smoothing:
        score = 0.0
        for i in range(orders):
            n_hyp, n_ref, n_match = stats[3 * i : 3 * i + 3]
            prec = n_match / n_hyp if n_hyp > 0 else _EPS
            rec = n_match / n_ref if n_ref > 0 else _EPS
            denom = factor * prec + rec
            score += ((1 + factor) * prec * rec / denom) if denom > 0 else _EPS
        return 100 * score / orders

    effective_order = 0
    avg_prec, avg_rec = 0.0, 0.0
    for i in range(orders):
        n_hyp, n_ref, n_match = stats[3 * i : 3 * i + 3]
        if n_hyp > 0 and n_ref > 0:
            avg_prec += n_match / n_hyp
            avg_rec += n_match / n_ref
            effective_order += 1
    if effective_order == 0:
        return 0.0
    avg_prec /= effective_order
    avg_rec /= effective_order
    if avg_prec + avg_rec:
        score = (1 + factor) * avg_prec * avg_rec
        score /= (factor * avg_prec) + avg_rec
        return 100 * score
    return 0.0


def f_scores(stats: NDArray[np.float64], beta: int, eps_smoothing: bool) -> NDArray[np.float64]:
    """``f_score`` of every row of ``stats``, with the same float operations in the same order."""
    factor = beta**2
    orders = stats.shape[1] // 3
    rows = stats.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        if eps_smoothing:
            score = np.zeros(rows)
            for i in range(orders):
                n_hyp, n_ref, n_match = stats[:, 3 * i], stats[:, 3 * i + 1], stats[:, 3 * i + 2]
                prec = np.where(n_hyp > 0, n_match / n_hyp, _EPS)
                rec = np.where(n_ref > 0, n_match / n_ref, _EPS)
                denom = factor * prec + rec
                score = score + np.where(denom > 0, (1 + factor) * prec * rec / denom, _EPS)
            return np.asarray(100 * score / orders, dtype=np.float64)
        effective_order = np.zeros(rows, dtype=np.int64)
        avg_prec, avg_rec = np.zeros(rows), np.zeros(rows)
        for i in range(orders):
            n_hyp, n_ref, n_match = stats[:, 3 * i], stats[:, 3 * i + 1], stats[:, 3 * i + 2]
            counted = (n_hyp > 0) & (n_ref > 0)
            avg_prec = np.where(counted, avg_prec + n_match / n_hyp, avg_prec)
            avg_rec = np.where(counted, avg_rec + n_match / n_ref, avg_rec)
            effective_order += counted
        avg_prec = avg_prec / effective_order
        avg_rec = avg_rec / effective_order
        score = (1 + factor) * avg_prec * avg_rec
        score = score / ((factor * avg_prec) + avg_rec)
        defined = (effective_order > 0) & (avg_prec + avg_rec != 0)
        return np.where(defined, 100 * score, 0.0)


def _chars_items(texts: list[str], options: CHRFOptions) -> tuple[Ints, Ints]:
    """The characters chrF counts of every text (``_chars``), as ``_text_items`` gives them.

    One pass over the texts joined by ``batch_tokens.SEPARATOR``: lowercasing and removing
    whitespace treat each text alike there (see ``batch_tokens``), and the separators, kept,
    mark where each text's characters end.
    """
    whole = batch_tokens.joined(texts)
    if whole is None:  # a text holds the separator
        return _text_items([_chars(text, options) for text in texts])
    if options.lowercase:
        whole = whole.lower()
    if not options.whitespace:
        whole = "".join(whole.split())
    # 'surrogatepass': a lone surrogate is a character like any other.
    raw = np.frombuffer(whole.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    is_separator = raw == ord(batch_tokens.SEPARATOR)
    bounds = np.flatnonzero(is_separator)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    offsets[1:-1] = bounds - np.arange(len(bounds))
    offsets[-1] = len(raw) - len(bounds)
    items, _ = batch_ngrams.renumber(raw[~is_separator].astype(np.int64) + 1)
    return items, offsets


def _text_items(texts: list[str]) -> tuple[Ints, Ints]:
    """Code points of texts, renumbered densely from 1 (CSR: items, offsets)."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(text) for text in texts], out=offsets[1:])
    # 'surrogatepass': a lone surrogate is a character like any other.
    raw = np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")
    items, _ = batch_ngrams.renumber(raw.astype(np.int64) + 1)
    return items, offsets


class CHRF(Metric[CHRFOptions]):
    """chrF (``sacrebleu.corpus_chrf`` / ``CHRF().corpus_score``); example score: sentence chrF."""

    name: ClassVar[str] = "chrf"
    Options: ClassVar[type[MetricOptions]] = CHRFOptions

    def __init__(self, options: CHRFOptions) -> None:
        super().__init__(options)
        orders = [f"char{n}" for n in range(1, options.char_order + 1)]
        orders += [f"word{n}" for n in range(1, options.word_order + 1)]
        self.stat_names = tuple(  # type: ignore[misc]
            f"{order}_{kind}" for order in orders for kind in ("hyp", "ref", "match")
        )

    def preprocess_key(self) -> Hashable:
        """Orders, case and whitespace; beta and smoothing only change the arithmetic."""
        opts = self.options
        return ("chrf-ngrams", opts.char_order, opts.word_order, opts.lowercase, opts.whitespace)

    def preprocess(self, text: str) -> ChrfText:
        """Per-order n-gram counts and totals of one text."""
        return ChrfText(text, self.options)

    def example_stats(self, candidate: ChrfText, references: Sequence[ChrfText]) -> Stats:
        """``[hyp, ref, match]`` per order against the best reference."""
        if len(references) == 1:
            return tuple(_match_stats(candidate, references[0]))
        beta, eps = self.options.beta, self.options.eps_smoothing
        best: list[int] = []
        best_f = -1.0
        for reference in references:
            stats = _match_stats(candidate, reference)
            f = f_score(stats, beta, eps)
            if f > best_f:
                best_f, best = f, stats
        return tuple(best)

    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example of a batch at once (see ``batch_ngrams``); None where keys cannot fit."""
        opts = self.options
        texts = batch.texts
        key = self.preprocess_key()
        parts: list[tuple[tuple[Ints, Ints], int]] = []
        if opts.char_order:
            parts.append(
                (batch.shared(key, "char-ids", lambda: _chars_items(texts, opts)), opts.char_order)
            )
        if opts.word_order:

            def words() -> tuple[Ints, Ints]:
                lower = opts.lowercase
                return batch_ngrams.token_items(
                    [split_punctuation(t.lower() if lower else t) for t in texts]
                )

            parts.append((batch.shared(key, "word-ids", words), opts.word_order))
        chunk = batch_ngrams.batch_pairs(batch)
        columns: list[Ints] = []
        for (items, text_offsets), order in parts:
            found = batch_ngrams.pair_matches(items, text_offsets, chunk, order)
            if found is None:
                return None
            lengths = np.diff(text_offsets)
            hyp_len = lengths[chunk.candidates][chunk.example]
            ref_len = lengths[chunk.references]
            for n in range(order):
                ref_total = np.maximum(ref_len - n, 0)
                present = ref_total > 0
                hyp_total = np.where(present, np.maximum(hyp_len - n, 0), 0)
                matched = np.where(present, found[n][chunk.example, chunk.side], 0)
                columns += (hyp_total, ref_total, matched)
        rows = np.stack(columns, axis=1).astype(np.float64)
        # The best reference by sentence chrF.
        return batch_ngrams.best_reference(
            chunk, rows, lambda: f_scores(rows, opts.beta, opts.eps_smoothing)
        )

    def score_stats(self, stats: Sequence[float]) -> float:
        """chrF from (summed) statistics."""
        return f_score(stats, self.options.beta, self.options.eps_smoothing)

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        """The orders and beta, as sacrebleu's ``CHRFScore`` reports them."""
        opts = self.options
        return {"char_order": opts.char_order, "word_order": opts.word_order, "beta": opts.beta}

    def signature_fields(self) -> list[tuple[str, str]]:
        """sacrebleu's fields; ``beta:B`` is added when beta is not 2 (sacrebleu omits it)."""
        opts = self.options
        fields = [
            ("case", "lc" if opts.lowercase else "mixed"),
            ("eff", "no" if opts.eps_smoothing else "yes"),
            ("nc", str(opts.char_order)),
            ("nw", str(opts.word_order)),
            ("space", "yes" if opts.whitespace else "no"),
        ]
        if opts.beta != BETA:
            fields.append(("beta", str(opts.beta)))
        return fields

    def example_scores(self, stats: NDArray[np.float64]) -> NDArray[np.float64]:
        """Sentence chrF of every row: ``f_scores``, which repeats ``f_score``'s arithmetic."""
        if self._scalar_scores_replaced(CHRF):
            return super().example_scores(stats)
        with np.errstate(over="ignore"):  # inf, as Python's floats give it, without a warning
            return f_scores(stats, self.options.beta, self.options.eps_smoothing)


class CHRFPlusPlus(CHRF):
    """chrF++: chrF with word unigrams and bigrams (``CHRF(word_order=2)``)."""

    name: ClassVar[str] = "chrf++"
    Options: ClassVar[type[MetricOptions]] = CHRFPlusPlusOptions
