"""TER, translation edit rate, identical to sacrebleu 2.6's ``TER`` (corpus and sentence).

Per example the statistics are sacrebleu's ``[edits, ref_len]``: the fewest edits (shifts,
insertions, deletions, substitutions) against any one reference, and the *mean* reference
length. Both add up over examples, so a corpus, a tag slice or a bootstrap resample is scored
from sums, exactly as ``TER().corpus_score`` scores a corpus; an example's own statistics give
``TER().sentence_score``. Lower is better (``higher_is_better = False``).

As sacrebleu does, references are run through the Tercom tokenizer twice (its reference cache
preprocesses a segment and extracts its words by preprocessing it again), hypotheses once;
with ``normalized`` the two can differ, and the numbers follow sacrebleu's.

The edit count itself (the shift search) is ``ter_edits``; the tokenizer is ``ter_tokenize``.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from goldgate.metrics.base import Metric, MetricOptions, Stats
from goldgate.metrics.edit.ter_edits import edit_count
from goldgate.metrics.edit.ter_tokenize import TercomTokenizer

if TYPE_CHECKING:  # annotations only: the module imports numpy where it computes
    import numpy as np
    import numpy.typing as npt


class TEROptions(MetricOptions):
    """sacrebleu's ``TER`` arguments."""

    normalized: bool = False
    no_punct: bool = False
    asian_support: bool = False
    case_sensitive: bool = False


class TerText:
    """A text's words as a hypothesis (tokenised once) and as a reference (twice)."""

    __slots__ = ("hyp", "ref")

    def __init__(self, hyp: list[str], ref: list[str]) -> None:
        self.hyp = hyp
        self.ref = ref


def ter_score(edits: float, ref_len: float) -> float:
    """sacrebleu's TER on 0–100 from (summed) edits and reference lengths."""
    if ref_len > 0:
        score = edits / ref_len
    elif edits > 0:
        score = 1.0  # empty references and a non-empty hypothesis
    else:
        score = 0.0  # both empty
    return 100 * score


class TER(Metric[TEROptions]):
    """Translation edit rate (Snover et al., 2006) as sacrebleu computes it."""

    name: ClassVar[str] = "ter"
    Options: ClassVar[type[MetricOptions]] = TEROptions
    stat_names: ClassVar[tuple[str, ...]] = ("edits", "ref_len")
    higher_is_better: ClassVar[bool] = False

    def __init__(self, options: TEROptions) -> None:
        super().__init__(options)
        self._tokenize = TercomTokenizer(
            normalized=options.normalized,
            no_punct=options.no_punct,
            asian_support=options.asian_support,
            case_sensitive=options.case_sensitive,
        )

    def preprocess_key(self) -> Hashable:
        return ("tercom", self.options)

    def preprocess(self, text: str) -> TerText:
        """sacrebleu's ``_preprocess_segment`` (the right-stripped text tokenised), once, twice."""
        once = self._tokenize(text.rstrip())
        twice = self._tokenize(once.rstrip())
        hyp = once.split()
        return TerText(hyp, hyp if twice == once else twice.split())

    def example_stats(self, candidate: TerText, references: Sequence[TerText]) -> Stats:
        """``(edits against the closest reference, mean reference length)``."""
        best = 10**16
        lengths = 0
        for reference in references:
            edits = edit_count(candidate.hyp, reference.ref)
            lengths += len(reference.ref)
            if edits < best:
                best = edits
        return (float(best), lengths / len(references))

    def score_stats(self, stats: Sequence[float]) -> float:
        """TER from summed statistics (0–100, lower is better; above 100 when edits outnumber
        reference words)."""
        return ter_score(stats[0], stats[1])

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        """sacrebleu's ``TERScore`` fields: the edits and the summed mean reference lengths."""
        return {"num_edits": int(stats[0]), "ref_length": stats[1]}

    def signature_fields(self) -> list[tuple[str, str]]:
        """sacrebleu's fields: case, tokenizer, normalisation, punctuation, Asian support."""
        opts = self.options
        return [
            ("case", "mixed" if opts.case_sensitive else "lc"),
            ("tok", "tercom"),
            ("norm", "yes" if opts.normalized else "no"),
            ("punct", "no" if opts.no_punct else "yes"),
            ("asian", "yes" if opts.asian_support else "no"),
        ]

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``ter_score`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(TER):
            return super().example_scores(stats)
        import numpy as np

        edits, ref_len = stats[:, 0], stats[:, 1]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            rate = np.where(ref_len > 0, edits / ref_len, np.where(edits > 0, 1.0, 0.0))
            return np.asarray(100 * rate, dtype=np.float64)
