"""Length ratio: candidate length over reference length, the guard against padded outputs.

A recall-oriented metric such as ROUGE rewards saying everything; gating ``length_ratio`` with
a ``max`` stops a system from buying recall with length.

- Tokens: ``tokenize: whitespace`` (the default) counts ``text.split()`` tokens;
  ``tokenize: char`` counts non-whitespace characters (for Chinese or Japanese, which carry no
  spaces).
- Several references: ``ref_length: closest`` (the default) takes the reference whose length is
  closest to the candidate's, the shorter on a tie — BLEU's effective reference length, so the
  ratio here is the ``sys_len / ref_len`` behind BLEU's brevity penalty. ``shortest`` and
  ``longest`` are the other choices.
- Score: ``100 · Σ candidate tokens / Σ reference tokens`` (statistics are summed, so a corpus
  is one ratio, not a mean of ratios); 100.0 means equal length. A reference of length 0 counts
  as length 1 against a non-empty candidate (so the ratio stays finite and large), and an empty
  candidate against an empty reference scores 100.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from goldgate.metrics.base import Metric, MetricOptions, Stats

if TYPE_CHECKING:  # annotations only: the module imports numpy where it computes
    import numpy as np
    import numpy.typing as npt


class LengthRatioOptions(MetricOptions):
    """Options of ``length_ratio``."""

    tokenize: Literal["whitespace", "char"] = "whitespace"
    ref_length: Literal["closest", "shortest", "longest"] = "closest"


def _whitespace_length(text: str) -> int:
    return len(text.split())


def _char_length(text: str) -> int:
    return len("".join(text.split()))


class LengthRatio(Metric[LengthRatioOptions]):
    """Candidate tokens / reference tokens × 100, summed over the corpus."""

    name = "length_ratio"
    Options: ClassVar[type[MetricOptions]] = LengthRatioOptions
    stat_names = ("sys_len", "ref_len")

    def preprocess_key(self) -> Any:
        # The choice of reference does not change a text's length, so only tokenize matters.
        return ("goldgate.length", self.options.tokenize)

    def preprocess(self, text: str) -> int:
        if self.options.tokenize == "char":
            return _char_length(text)
        return _whitespace_length(text)

    def example_stats(self, candidate: int, references: Sequence[int]) -> Stats:
        choice = self.options.ref_length
        if choice == "shortest":
            ref_len = min(references)
        elif choice == "longest":
            ref_len = max(references)
        else:
            ref_len = min(references, key=lambda length: (abs(length - candidate), length))
        return (float(candidate), float(ref_len))

    def score_stats(self, stats: Sequence[float]) -> float:
        sys_len, ref_len = stats[0], stats[1]
        if ref_len == 0:
            return 100.0 if sys_len == 0 else 100.0 * sys_len
        return 100.0 * sys_len / ref_len

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        return {"sys_len": int(stats[0]), "ref_len": int(stats[1])}

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("tok", self.options.tokenize), ("ref", self.options.ref_length)]

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(LengthRatio):
            return super().example_scores(stats)
        import numpy as np

        sys_len, ref_len = stats[:, 0], stats[:, 1]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            no_ref = np.where(sys_len == 0, 100.0, 100.0 * sys_len)
            return np.where(ref_len == 0, no_ref, 100.0 * sys_len / ref_len)
