"""METEOR, identical to NLTK 3.10's ``nltk.translate.meteor_score.meteor_score``, averaged over
examples as Hugging Face ``evaluate``'s ``meteor`` reports it.

For one hypothesis and one reference NLTK aligns lowercased words in three stages, each on
what the previous left unmatched: exact words, then Porter stems (NLTK's stemmer, of which
goldgate ships a copy: ``porter``), then WordNet synonyms of the *stemmed* hypothesis word
against the stemmed reference words (NLTK passes the stage's stemmed leftovers on). In every
stage hypothesis words are taken from last to first, each matching the latest still-unmatched
reference position. Then ``P = m / len(hyp)``, ``R = m / len(ref)``,
``F = P·R / (α·P + (1 − α)·R)``, ``penalty = γ·(chunks / m)^β`` and the score is
``(1 − penalty)·F``; with several references the best one counts. Scores are on 0–100 here.

Statistics: ``(score, 1)`` per example. The corpus score is their mean (``evaluate``'s
``np.mean``), so it, a tag slice and a bootstrap resample are all exact sums; METEOR's own
counts do not add up across sentences, and NLTK offers no corpus-level METEOR to match.

Tokenisation: ``evaluate`` calls ``nltk.word_tokenize``, which splits sentences with Punkt (a
model NLTK downloads) before its Treebank rules. ``tokenize: nltk`` (the default) applies the
same Treebank rules to each text as one line (``word_tokenize(text, preserve_line=True)``),
which equals ``evaluate`` on one-sentence texts; ``tokenize: whitespace`` splits on
whitespace. WordNet's files are found as ``wordnet`` describes; NLTK is never imported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from goldgate.metrics.base import Metric, MetricOptions, Stats, option, ratio_scores
from goldgate.metrics.meteor.nltk_tokenize import nltk_word_tokenize
from goldgate.metrics.meteor.wordnet import WordNet, load_wordnet, locate_wordnet
from goldgate.metrics.text.porter import PorterStemmer

if TYPE_CHECKING:  # annotations only: the module imports numpy where it computes
    import numpy as np
    import numpy.typing as npt

Tokenize = Literal["nltk", "whitespace"]
_TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "nltk": nltk_word_tokenize,
    "whitespace": str.split,
}
Enum = list[tuple[int, str]]


class METEOROptions(MetricOptions):
    """NLTK's ``meteor_score`` parameters, the tokenizer, and where WordNet is."""

    alpha: float = option(default=0.9, ge=0.0, le=1.0)
    beta: float = option(default=3.0, ge=0.0, le=100.0)
    gamma: float = option(default=0.5, ge=0.0, le=1.0)
    tokenize: Tokenize = "nltk"
    #: A WordNet dict directory or wordnet.zip; by default $GOLDGATE_WORDNET, NLTK's data
    #: directories, then WordNet's own installations. Not in the signature (the version is).
    wordnet: str | None = None


class MeteorText:
    """One text's lowercased words and their Porter stems."""

    __slots__ = ("stems", "words")

    def __init__(self, words: list[str], stems: list[str]) -> None:
        self.words = words
        self.stems = stems


def _match(hyp: Enum, ref: Enum) -> tuple[list[tuple[int, int]], Enum, Enum]:
    """NLTK's ``_match_enums``: equal words, each hypothesis word from the last taking the
    latest unmatched reference position."""
    positions: defaultdict[str, list[int]] = defaultdict(list)
    for j, (_, word) in enumerate(ref):
        positions[word].append(j)
    matches = []
    used_hyp: set[int] = set()
    used_ref: set[int] = set()
    for i in range(len(hyp) - 1, -1, -1):
        where = positions.get(hyp[i][1])
        if where:
            j = where.pop()
            used_hyp.add(i)
            used_ref.add(j)
            matches.append((hyp[i][0], ref[j][0]))
    return (
        matches,
        [pair for i, pair in enumerate(hyp) if i not in used_hyp],
        [pair for j, pair in enumerate(ref) if j not in used_ref],
    )


def _synonym_match(hyp: Enum, ref: Enum, wordnet: WordNet) -> list[tuple[int, int]]:
    """NLTK's ``_enum_wordnetsyn_match``: a hypothesis word matches the latest unmatched
    reference position holding one of its WordNet synonyms (or itself)."""
    positions: defaultdict[str, list[int]] = defaultdict(list)
    for j, (_, word) in enumerate(ref):
        positions[word].append(j)
    matches = []
    for i in range(len(hyp) - 1, -1, -1):
        best_j = -1
        best_word = None
        for synonym in wordnet.synonyms(hyp[i][1]):
            where = positions.get(synonym)
            if where and where[-1] > best_j:
                best_j = where[-1]
                best_word = synonym
        if best_word is not None:
            positions[best_word].pop()
            matches.append((hyp[i][0], ref[best_j][0]))
    return matches


def _chunks(matches: list[tuple[int, int]]) -> int:
    """NLTK's ``_count_chunks`` of matches sorted by hypothesis position."""
    chunks = 1
    for k in range(len(matches) - 1):
        following, current = matches[k + 1], matches[k]
        if not (following[0] == current[0] + 1 and following[1] == current[1] + 1):
            chunks += 1
    return chunks


def single_meteor(
    hyp: MeteorText,
    ref: MeteorText,
    wordnet: WordNet,
    *,
    alpha: float,
    beta: float,
    gamma: float,
) -> float:
    """NLTK's ``single_meteor_score`` (0–1) of one hypothesis against one reference."""
    exact, hyp_left, ref_left = _match(list(enumerate(hyp.words)), list(enumerate(ref.words)))
    stemmed, hyp_left, ref_left = _match(
        [(i, hyp.stems[i]) for i, _ in hyp_left], [(j, ref.stems[j]) for j, _ in ref_left]
    )
    synonyms = _synonym_match(hyp_left, ref_left, wordnet)
    matches = sorted(exact + stemmed + synonyms, key=lambda pair: pair[0])
    matches_count = len(matches)
    # NLTK's arithmetic, in NLTK's order: a zero anywhere scores 0.
    try:
        precision = float(matches_count) / len(hyp.words)
        recall = float(matches_count) / len(ref.words)
        fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall)
        chunk_count = float(_chunks(matches))
        frag_frac = chunk_count / matches_count
    except ZeroDivisionError:
        return 0.0
    penalty: float = gamma * frag_frac**beta
    return (1 - penalty) * fmean


class METEOR(Metric[METEOROptions]):
    """Mean over examples of NLTK's ``meteor_score`` (best reference), on 0–100."""

    name: ClassVar[str] = "meteor"
    Options: ClassVar[type[MetricOptions]] = METEOROptions
    stat_names: ClassVar[tuple[str, ...]] = ("score_sum", "count")

    def __init__(self, options: METEOROptions) -> None:
        super().__init__(options)
        self._tokenize = _TOKENIZERS[options.tokenize]
        self._stemmer = PorterStemmer()
        self._stems: dict[str, str] = {}
        self._wordnet: WordNet | None = None
        # Found now (not read: that waits for the first example), so that a configuration
        # naming METEOR on a machine without WordNet is an error at its line, before any run.
        locate_wordnet(options.wordnet)

    @property
    def wordnet(self) -> WordNet:
        """WordNet, read on first use."""
        if self._wordnet is None:
            self._wordnet = load_wordnet(self.options.wordnet)
        return self._wordnet

    def preprocess_key(self) -> Hashable:
        return ("meteor-words", self.options.tokenize)

    def preprocess(self, text: str) -> MeteorText:
        """Tokenise, lowercase (NLTK's ``preprocess=str.lower``), stem."""
        words = [token.lower() for token in self._tokenize(text)]
        stems = self._stems
        for word in words:
            if word not in stems:
                stems[word] = self._stemmer.stem(word)
        return MeteorText(words, [stems[word] for word in words])

    def example_stats(self, candidate: MeteorText, references: Sequence[MeteorText]) -> Stats:
        """``(100 × meteor_score, 1)``."""
        opts = self.options
        wordnet = self.wordnet
        best = max(
            single_meteor(
                candidate, ref, wordnet, alpha=opts.alpha, beta=opts.beta, gamma=opts.gamma
            )
            for ref in references
        )
        return (100 * best, 1.0)

    def score_stats(self, stats: Sequence[float]) -> float:
        """The mean example score (0 for no examples)."""
        return stats[0] / stats[1] if stats[1] else 0.0

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        """How many examples the mean is over."""
        return {"count": int(stats[1])}

    def signature_fields(self) -> list[tuple[str, str]]:
        """Tokenizer, α β γ, the stemmer and WordNet's version."""
        opts = self.options
        return [
            ("tok", opts.tokenize),
            ("alpha", f"{opts.alpha:g}"),
            ("beta", f"{opts.beta:g}"),
            ("gamma", f"{opts.gamma:g}"),
            ("stem", "porter-nltk3.10"),
            ("wn", self.wordnet.version),
        ]

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(METEOR):
            return super().example_scores(stats)
        return ratio_scores(stats[:, 0], stats[:, 1])
