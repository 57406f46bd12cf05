"""ROUGE-W, ROUGE-S and ROUGE-SU as defined by ROUGE-1.5.5 (the Perl script), on goldgate tokens.

These metrics exist only in the Perl script; rouge-score has none of them. goldgate follows the
script's definitions of what is counted, with the ROUGE family's tokenizers (``default`` or
``unicode``) and stemmer (NLTK Porter) instead of the script's own, so the numbers are close to
but not identical with ``ROUGE-1.5.5.pl`` output (its stemmer and tokenizer differ, and it
rounds P and R to five decimals).

ROUGE-W (``weight`` w, default 1.2, f(k) = k^w): texts are split into sentences on ``"\\n"``.
For each reference sentence, the weighted LCS against every candidate sentence is computed
with the script's dynamic programme (``c[i][j] = c[i-1][j-1] + f(k+1) - f(k)``, k the length of
the run of consecutive matches ending there) and its backtrack; the marked reference positions
are united, each kept only while unused unigram counts remain on both sides (as ROUGE-L's
clipping), and every run of consecutive kept positions of length k adds f(k) to the hits,
exactly as the script's ``wlcs`` accumulates them. Then

    P = (hits / f(|candidate|)) ** (1/w)
    R = (hits / Σ_s f(|s|)) ** (1/w)          over the reference's sentences s
    F = 2PR / (P + R)

The recall denominator is the script's per-sentence base ``Σ_s |s|^w``, applied once. The script
applies f a second time (``wlcsWeight($lcsBase)``, i.e. ``(Σ_s |s|^w)^w``), which makes the
recall of a candidate identical to a one-sentence reference of m tokens equal to
``m^(1-w)`` instead of 1; goldgate does not copy that quirk. For a one-sentence reference the
formula is the paper's (Lin 2004, section 3.3): R = f⁻¹(WLCS / f(m)), P = f⁻¹(WLCS / f(n)).

ROUGE-S (``max_skip`` d, default 4; negative means unlimited): the counts of ordered token
pairs (i, j) with i < j ≤ i + d + 1 (at most d tokens between them) over the whole token
sequence (pairs run across sentences, as in the script); hits = Σ min(counts);
P = hits / #candidate pairs, R = hits / #reference pairs. ROUGE-SU adds every unigram to both
sides. The script's SU skips the last token of each text when it adds unigrams (its loop stops
one token early), so a one-word candidate gets no unigram at all; goldgate counts every token.

Several references: per example the reference with the highest F, the first on ties, as in the
rest of goldgate's ROUGE family (the script averages or takes the best by recall instead).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any, ClassVar

from goldgate.metrics.base import MetricOptions, option
from goldgate.metrics.ngram.lcs import wlcs_hit_mask
from goldgate.metrics.ngram.rouge import RougeMetric, RougeOptions, RougeText, fmeasure


class RougeWOptions(RougeOptions):
    """ROUGE-W: the weight w of f(k) = k^w (1 gives union-LCS ROUGE-L)."""

    weight: float = option(default=1.2, ge=1.0)


class RougeSOptions(RougeOptions):
    """ROUGE-S/SU: the most tokens allowed between a pair's two tokens (negative: any)."""

    max_skip: int = 4


def weighted_lcs_hits(
    ref_sentences: Sequence[Sequence[str]],
    cand_sentences: Sequence[Sequence[str]],
    ref_counts: Counter[Any],
    cand_counts: Counter[Any],
    weight: float,
) -> float:
    """ROUGE-1.5.5's ROUGE-W hits: Σ f(run length) over the clipped union of WLCS marks."""
    longest = max(map(len, cand_sentences), default=0)
    weights = [k**weight for k in range(longest + 2)]
    remaining_ref = dict(ref_counts)
    remaining_cand = dict(cand_counts)
    hits = 0.0
    for ref in ref_sentences:
        marked = [False] * len(ref)
        for cand in cand_sentences:
            wlcs_hit_mask(ref, cand, weights, marked)
        run = 0
        last = len(ref) - 1
        for j, token in enumerate(ref):
            if not marked[j]:
                continue
            if remaining_ref[token] > 0 and remaining_cand.get(token, 0) > 0:
                run += 1
                # The script closes a run only at an unmarked position or the sentence end;
                # a marked but clipped token neither extends nor closes it.
                if j == last or not marked[j + 1]:
                    hits += run**weight
                    run = 0
                remaining_ref[token] -= 1
                remaining_cand[token] -= 1
    return hits


def skip_bigrams(tokens: Sequence[str], max_skip: int, *, unigrams: bool) -> Counter[Any]:
    """Counts of the skip-bigrams (pairs as tuples) of ``tokens``, plus unigrams for SU."""
    counts: Counter[Any] = Counter(tokens) if unigrams else Counter()
    limit = len(tokens) if max_skip < 0 else min(len(tokens), max_skip + 2)
    for gap in range(1, limit):
        counts.update(zip(tokens, tokens[gap:], strict=False))
    return counts


class RougeW(RougeMetric[RougeWOptions]):
    """ROUGE-W: weighted LCS rewarding consecutive matches (ROUGE-1.5.5 definition)."""

    name = "rougeW"
    Options: ClassVar[type[MetricOptions]] = RougeWOptions

    def pair_scores(self, candidate: RougeText, reference: RougeText) -> tuple[float, float, float]:
        weight: float = self.options.weight
        n = len(candidate.tokens)
        # Added one sentence at a time, as the script adds them (and as ``hits`` is added):
        # the builtin ``sum`` of floats is compensated since Python 3.12.
        base = 0.0
        for sentence in reference.sentences:
            base += len(sentence) ** weight
        if not n or not base:
            return 0.0, 0.0, 0.0
        hits = weighted_lcs_hits(
            reference.sentences,
            candidate.sentences,
            reference.ngrams(1),
            candidate.ngrams(1),
            weight,
        )
        precision = (hits / n**weight) ** (1 / weight)
        recall = (hits / base) ** (1 / weight)
        return precision, recall, fmeasure(precision, recall)

    def signature_fields(self) -> list[tuple[str, str]]:
        weight: float = self.options.weight
        return [*super().signature_fields(), ("weight", f"{weight:g}")]


class RougeS(RougeMetric[RougeSOptions]):
    """ROUGE-S: skip-bigram co-occurrence (ROUGE-1.5.5 definition)."""

    name = "rougeS"
    Options: ClassVar[type[MetricOptions]] = RougeSOptions
    unigrams: ClassVar[bool] = False

    def _counts(self, text: RougeText) -> tuple[Counter[Any], int]:
        max_skip = self.options.max_skip
        unigrams = self.unigrams

        def build() -> tuple[Counter[Any], int]:
            counts = skip_bigrams(text.tokens, max_skip, unigrams=unigrams)
            return counts, counts.total()

        key: Hashable = ("skip", max(max_skip, -1), unigrams)
        result: tuple[Counter[Any], int] = text.cached(key, build)
        return result

    def pair_scores(self, candidate: RougeText, reference: RougeText) -> tuple[float, float, float]:
        cand, cand_total = self._counts(candidate)
        ref, ref_total = self._counts(reference)
        if len(cand) > len(ref):
            cand, ref = ref, cand
        hits = 0
        for gram in cand.keys() & ref.keys():
            a = cand[gram]
            b = ref[gram]
            hits += a if a < b else b
        precision = hits / cand_total if cand_total else 0.0
        recall = hits / ref_total if ref_total else 0.0
        return precision, recall, fmeasure(precision, recall)

    def signature_fields(self) -> list[tuple[str, str]]:
        max_skip: int = self.options.max_skip
        skip = "inf" if max_skip < 0 else str(max_skip)
        return [*super().signature_fields(), ("skip", skip)]


class RougeSU(RougeS):
    """ROUGE-SU: skip-bigrams plus unigrams (every token counted; see the module docstring)."""

    name = "rougeSU"
    unigrams = True
