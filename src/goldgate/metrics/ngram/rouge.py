"""ROUGE-N, ROUGE-L and ROUGE-Lsum, score for score equal to rouge-score 0.1.2's RougeScorer.

Every definition is rouge-score's (``rouge_scorer.py``):

- ROUGE-N: hits = Σ min(count in reference, count in candidate) over n-grams;
  P = hits / max(#candidate n-grams, 1), R = hits / max(#reference n-grams, 1),
  F = 2PR / (P + R), or 0 when P + R = 0. N-grams run across newlines.
- ROUGE-L: LCS over the whole token lists; P = LCS / |candidate|, R = LCS / |reference|;
  all zero when either side has no token.
- ROUGE-Lsum: texts are split into sentences on ``"\\n"``; for every reference sentence, the
  union of the LCS positions against each candidate sentence (rouge-score's backtrack and its
  tie-break), each union token counted only while unused unigram counts remain on both sides;
  P = hits / |candidate tokens|, R = hits / |reference tokens|. Without newlines it equals
  ROUGE-L.
- Several references: per example, the reference with the highest F, the first on ties
  (``RougeScorer.score_multi``).

Statistics per example are ``(precision, recall, fmeasure, 1)`` on the 0–1 scale, so a sum
over examples divided by its count is a mean. The corpus score is rouge-score's convention:
the mean per-example F, reported on 0–100 with the mean precision and recall beside it.

``split_summaries=true`` asks, as in rouge-score, for NLTK's punkt sentence splitter instead of
newlines. goldgate calls ``nltk.sent_tokenize`` exactly as rouge-score does when NLTK and its
punkt data are installed, and otherwise refuses the option (a MetricError that says how to
install them or to put one sentence per line); it never substitutes another splitter, because
the numbers would then silently differ from rouge-score's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from goldgate.errors import MetricError
from goldgate.metrics.base import Metric, MetricOptions, Stats, ratio_scores
from goldgate.metrics.ngram.lcs import lcs_indices, lcs_length, position_masks
from goldgate.metrics.text.rouge_tokenize import (
    STEM_INSTALL_HINT,
    STEMMER_ID,
    Tokenizer,
    TokenizerName,
    make_tokenizer,
)
from goldgate.metrics.text_batch import TextBatch

if TYPE_CHECKING:  # annotations only: the module imports numpy where it computes
    import numpy as np
    import numpy.typing as npt

Sentences = list[list[str]]

# rouge-score's default tokens (``rouge_tokenize.default_tokens``) of texts joined by
# ``batch_tokens.SEPARATOR``, which comes out as a token of its own between two texts.
_JOINED_ASCII_TOKEN = re.compile(r"[a-z0-9]+|\x00")


class RougeText:
    """A text tokenised once for the whole ROUGE family; derived views are built on demand."""

    __slots__ = ("_cache", "_tokenize", "sentences", "text", "tokens")

    def __init__(self, text: str, tokenize: Tokenizer) -> None:
        self.text = text
        self._tokenize = tokenize
        # Tokenising line by line gives the same tokens as the whole text: "\n" is a
        # separator for every tokenizer and lowercasing never looks across it.
        sentences = [tokenize(line) for line in text.split("\n") if line]
        self.sentences: Sentences = [s for s in sentences if s]
        if len(self.sentences) == 1:
            self.tokens: list[str] = self.sentences[0]
        else:
            self.tokens = [token for sentence in self.sentences for token in sentence]
        self._cache: dict[Hashable, Any] = {}

    def cached(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """A value derived from this text, built once per key (metrics' own views)."""
        try:
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = build()
            return value

    def ngrams(self, n: int) -> Counter[Any]:
        """Counts of the text's n-grams (plain tokens for n = 1, tuples otherwise)."""
        key = ("ngrams", n)
        counts: Counter[Any] | None = self._cache.get(key)
        if counts is None:
            tokens = self.tokens
            if n == 1:
                counts = Counter(tokens)
            else:
                counts = Counter(zip(*(tokens[i:] for i in range(n)), strict=False))
            self._cache[key] = counts
        return counts

    def masks(self) -> dict[str, int]:
        """Bit positions of every distinct token (for bit-parallel LCS)."""
        masks: dict[str, int] | None = self._cache.get("masks")
        if masks is None:
            masks = self._cache["masks"] = position_masks(self.tokens)
        return masks

    def split_sentences(self, splitter: str) -> Sentences:
        """Tokenised sentences: newline-separated (``"newline"``) or from NLTK's punkt."""
        if splitter == "newline":
            return self.sentences
        key = ("sentences", splitter)
        sentences: Sentences | None = self._cache.get(key)
        if sentences is None:
            pieces = [s for s in _punkt()(self.text) if s]
            sentences = self._cache[key] = [t for t in map(self._tokenize, pieces) if t]
        return sentences

    def sentence_counts(self, splitter: str) -> Counter[Any]:
        """Token counts over the sentences (the text's unigram counts for newlines)."""
        if splitter == "newline":
            return self.ngrams(1)
        key = ("sentence_counts", splitter)
        counts: Counter[Any] | None = self._cache.get(key)
        if counts is None:
            counts = Counter()
            for sentence in self.split_sentences(splitter):
                counts.update(sentence)
            self._cache[key] = counts
        return counts

    def sentence_masks(self, splitter: str) -> list[dict[str, int]]:
        """``position_masks`` of every sentence."""
        key = ("sentence_masks", splitter)
        masks: list[dict[str, int]] | None = self._cache.get(key)
        if masks is None:
            sentences = self.split_sentences(splitter)
            masks = self._cache[key] = [position_masks(s) for s in sentences]
        return masks


def _punkt() -> Any:
    try:
        import nltk
    except ImportError:
        raise MetricError(
            "split_summaries=true splits sentences with NLTK's punkt as rouge-score does, "
            f"and NLTK is not installed: run {STEM_INSTALL_HINT} and "
            "`python -m nltk.downloader punkt_tab`, or put one sentence per line"
        ) from None
    return nltk.sent_tokenize


def _check_punkt() -> None:
    sent_tokenize = _punkt()
    try:
        sent_tokenize("One. Two.")
    except LookupError:
        raise MetricError(
            "split_summaries=true splits sentences with NLTK's punkt as rouge-score does, "
            "and the punkt data is not installed: run `python -m nltk.downloader punkt_tab`, "
            "or put one sentence per line and leave split_summaries false"
        ) from None


def fmeasure(precision: float, recall: float) -> float:
    """rouge-score's F1: harmonic mean, 0 when both are 0."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0


def ngram_prf(candidate: RougeText, reference: RougeText, n: int) -> tuple[float, float, float]:
    """ROUGE-N precision, recall and F of one pair (0–1)."""
    cand = candidate.ngrams(n)
    ref = reference.ngrams(n)
    if len(cand) > len(ref):
        cand, ref = ref, cand
    hits = 0
    if cand and ref:
        for gram in cand.keys() & ref.keys():
            a = cand[gram]
            b = ref[gram]
            hits += a if a < b else b
    precision = hits / max(len(candidate.tokens) - n + 1, 1)
    recall = hits / max(len(reference.tokens) - n + 1, 1)
    return precision, recall, fmeasure(precision, recall)


def lcs_prf(candidate: RougeText, reference: RougeText) -> tuple[float, float, float]:
    """ROUGE-L precision, recall and F of one pair (0–1)."""
    n = len(candidate.tokens)
    m = len(reference.tokens)
    if not n or not m:
        return 0.0, 0.0, 0.0
    lcs = lcs_length(candidate.masks(), n, reference.tokens)
    precision = lcs / n
    recall = lcs / m
    return precision, recall, fmeasure(precision, recall)


def summary_lcs_hits(
    ref_sentences: Sentences,
    cand_sentences: Sentences,
    cand_masks: Sequence[dict[str, int]],
    ref_counts: Counter[Any],
    cand_counts: Counter[Any],
) -> int:
    """rouge-score's ``_summary_level_lcs`` hits: union LCS per reference sentence, clipped."""
    remaining_ref = dict(ref_counts)
    remaining_cand = dict(cand_counts)
    hits = 0
    for ref in ref_sentences:
        union: set[int] = set()
        for cand, masks in zip(cand_sentences, cand_masks, strict=True):
            union.update(lcs_indices(ref, cand, masks))
        for index in sorted(union):
            token = ref[index]
            if remaining_cand[token] > 0 and remaining_ref[token] > 0:
                hits += 1
                remaining_cand[token] -= 1
                remaining_ref[token] -= 1
    return hits


def summary_lcs_prf(
    candidate: RougeText, reference: RougeText, splitter: str
) -> tuple[float, float, float]:
    """ROUGE-Lsum precision, recall and F of one pair (0–1)."""
    cand_sentences = candidate.split_sentences(splitter)
    ref_sentences = reference.split_sentences(splitter)
    if len(cand_sentences) <= 1 and len(ref_sentences) <= 1:
        # One LCS, whose tokens are never clipped: exactly ROUGE-L.
        return lcs_prf(candidate, reference)
    n = sum(map(len, cand_sentences))
    m = sum(map(len, ref_sentences))
    if not n or not m:
        return 0.0, 0.0, 0.0
    hits = summary_lcs_hits(
        ref_sentences,
        cand_sentences,
        candidate.sentence_masks(splitter),
        reference.sentence_counts(splitter),
        candidate.sentence_counts(splitter),
    )
    recall = hits / m
    precision = hits / n
    return precision, recall, fmeasure(precision, recall)


class RougeOptions(MetricOptions):
    """Options shared by the ROUGE family."""

    use_stemmer: bool = False
    tokenizer: TokenizerName = "default"


class RougeLsumOptions(RougeOptions):
    """ROUGE-Lsum also takes rouge-score's ``split_summaries`` (NLTK punkt, see the module)."""

    split_summaries: bool = False


RougeOptionsT = TypeVar("RougeOptionsT", bound=RougeOptions)


class RougeMetric(Metric[RougeOptionsT]):
    """Base of the ROUGE family: shared preprocessing, best reference by F, mean F."""

    Options: ClassVar[type[MetricOptions]] = RougeOptions
    stat_names = ("precision", "recall", "fmeasure", "count")

    def __init__(self, options: RougeOptionsT) -> None:
        super().__init__(options)
        self._tokenize = make_tokenizer(options.tokenizer, use_stemmer=options.use_stemmer)

    def preprocess_key(self) -> Hashable:
        return ("rouge", self.options.tokenizer, self.options.use_stemmer)

    def preprocess(self, text: str) -> RougeText:
        return RougeText(text, self._tokenize)

    def pair_scores(self, candidate: RougeText, reference: RougeText) -> tuple[float, float, float]:
        """Precision, recall and F (0–1) of the candidate against one reference."""
        raise NotImplementedError

    def _token_ids(self, batch: TextBatch) -> tuple[Any, Any]:
        """The batch's texts tokenised (as ``RougeText.tokens``), as CSR token ids; shared."""
        from goldgate.metrics.ngram import batch_ngrams, batch_tokens

        tokenize = self._tokenize

        def tokens(text: str) -> list[str]:
            # RougeText tokenises line by line (for ROUGE-Lsum), which gives the same tokens.
            return RougeText(text, tokenize).tokens if "\n" in text else tokenize(text)

        def joined_tokens(text: str) -> list[str]:
            return _JOINED_ASCII_TOKEN.findall(text.lower())

        def build() -> tuple[Any, Any]:
            if self.options.tokenizer == "default" and not self.options.use_stemmer:
                return batch_tokens.token_items(batch.texts, joined_tokens, tokens)
            return batch_ngrams.token_items([tokens(text) for text in batch.texts])

        return batch.shared(self.preprocess_key(), "token-ids", build)  # type: ignore[no-any-return]

    def _best_rows(self, chunk: Any, hits: Any, lengths: Any, offset: int) -> Any:
        """Rows ``(P, R, F, 1)`` of the best reference per example from each pair's hits
        (n-gram matches with ``offset`` n - 1, or the LCS with 0): rouge-score's arithmetic,
        operation for operation (see ``ngram_prf``, ``lcs_prf`` and ``fmeasure``)."""
        import numpy as np

        from goldgate.metrics.ngram import batch_ngrams

        hits = hits.astype(np.float64)
        candidate_len = lengths[chunk.candidates][chunk.example] - offset
        reference_len = lengths[chunk.references] - offset
        precision = hits / np.maximum(candidate_len, 1)
        recall = hits / np.maximum(reference_len, 1)
        total = precision + recall
        with np.errstate(invalid="ignore", divide="ignore"):
            f = np.where(total > 0, 2 * precision * recall / total, 0.0)
        rows = np.stack([precision, recall, f, np.ones(len(f))], axis=1)
        # The reference with the highest F.
        return batch_ngrams.best_reference(chunk, rows, lambda: f)

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        best: tuple[float, float, float] | None = None
        for reference in references:
            scores = self.pair_scores(candidate, reference)
            if best is None or scores[2] > best[2]:
                best = scores
        if best is None:
            return (0.0, 0.0, 0.0, 1.0)
        return (*best, 1.0)

    def score_stats(self, stats: Sequence[float]) -> float:
        return 100 * stats[2] / stats[3] if stats[3] else 0.0

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        count = stats[3]
        names = ("precision", "recall", "fmeasure")
        return {key: (100 * stats[i] / count if count else 0.0) for i, key in enumerate(names)}

    def signature_fields(self) -> list[tuple[str, str]]:
        return [
            ("tok", self.options.tokenizer),
            ("stem", STEMMER_ID if self.options.use_stemmer else "no"),
        ]

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(RougeMetric):
            return super().example_scores(stats)
        return ratio_scores(stats[:, 2], stats[:, 3], 100)


class RougeN(RougeMetric[RougeOptions]):
    """ROUGE-N on n-grams; the subclasses fix n."""

    n: ClassVar[int]

    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example of a batch at once: n-gram hits from ``batch_ngrams``, then P/R/F."""
        import numpy as np

        from goldgate.metrics.ngram import batch_ngrams

        n, key = self.n, self.preprocess_key()
        items, offsets = self._token_ids(batch)
        chunk = batch_ngrams.batch_pairs(batch)
        # ROUGE-1 and ROUGE-2 share one count: orders 1 and 2 come from the same sort.
        found = batch.peek(key, "matches")
        if found is None or len(found) < n:
            found = batch_ngrams.pair_matches(items, offsets, chunk, max(n, 2))
            if found is None:
                return None
            batch.put(key, "matches", found)
        hits = found[n - 1][chunk.example, chunk.side]
        return self._best_rows(chunk, hits, np.diff(offsets), n - 1)

    def pair_scores(self, candidate: RougeText, reference: RougeText) -> tuple[float, float, float]:
        return ngram_prf(candidate, reference, self.n)


def _rouge_n(n: int) -> type[RougeN]:
    """The ROUGE-N class for one ``n`` (registered by name as ``rouge<n>``)."""
    attributes = {
        "name": f"rouge{n}",
        "n": n,
        "__doc__": f"ROUGE-{n}: {n}-gram overlap.",
        "__module__": __name__,
    }
    return type(f"Rouge{n}", (RougeN,), attributes)


Rouge1, Rouge2, Rouge3, Rouge4, Rouge5, Rouge6, Rouge7, Rouge8, Rouge9 = (
    _rouge_n(n) for n in range(1, 10)
)


class RougeL(RougeMetric[RougeOptions]):
    """ROUGE-L: LCS over the whole texts."""

    name = "rougeL"

    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example of a batch at once: the LCS of every pair from ``batch_lcs``."""
        import numpy as np

        from goldgate.metrics.ngram import batch_lcs, batch_ngrams

        items, offsets = self._token_ids(batch)
        chunk = batch_ngrams.batch_pairs(batch)
        lcs = batch_lcs.lcs_lengths(
            items, offsets, chunk.candidates[chunk.example], chunk.references
        )
        # An empty side has an LCS of 0, hence all zero as in lcs_prf.
        return self._best_rows(chunk, lcs, np.diff(offsets), 0)

    def pair_scores(self, candidate: RougeText, reference: RougeText) -> tuple[float, float, float]:
        return lcs_prf(candidate, reference)


class RougeLsum(RougeMetric[RougeLsumOptions]):
    """ROUGE-Lsum: summary-level union LCS over sentences."""

    name = "rougeLsum"
    Options: ClassVar[type[MetricOptions]] = RougeLsumOptions

    def __init__(self, options: RougeLsumOptions) -> None:
        super().__init__(options)
        if options.split_summaries:
            _check_punkt()
        self._splitter: str = "punkt" if options.split_summaries else "newline"

    def pair_scores(self, candidate: RougeText, reference: RougeText) -> tuple[float, float, float]:
        return summary_lcs_prf(candidate, reference, self._splitter)

    def signature_fields(self) -> list[tuple[str, str]]:
        return [*super().signature_fields(), ("split", self._splitter)]
