"""Exact match and token F1: the SQuAD evaluation script's metrics, with named normalisers.

With the default ``normalizer: squad`` both equal the SQuAD v1.1 ``evaluate-v1.1.py``:
lowercase, delete ASCII punctuation (deleted, not replaced: ``a-b`` → ``ab``), replace the
words ``a``/``an``/``the`` by a space, collapse whitespace; F1 is the multiset overlap of the
normalised whitespace tokens and is 0 whenever nothing overlaps (even when both sides are
empty); both take the best reference.

Normalisers are named and versioned, and the version is part of the signature
(``norm:squad.v1``), so a change to what a name means can never be compared silently:

- ``squad``: the v1.1 script, as above.
- ``squad_v2``: the same text normalisation with the SQuAD v2.0 script's rules for empty
  answers: references that normalise to nothing are dropped (leaving ``[""]`` when none is
  left) and F1 is 100 when candidate and reference are both empty, 0 when only one is.
- ``strict``: the exact string, only surrounding whitespace stripped.
- ``lower``: lowercase and collapse whitespace.
- a list of steps, applied in order (``[lower, nfkc, strip_punct]`` in YAML, or
  ``normalizer=lower+nfkc+strip_punct`` in a command-line spec); see ``STEPS`` for the names.
  A list equal to a named normaliser's steps is that normaliser; any other list is signed
  ``norm:custom.v1[lower+nfkc+strip_punct]``. Lists follow the v1.1 rules for empty answers.
  A single name that is both a normaliser and a step (``lower``) means the normaliser.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from goldgate.errors import did_you_mean
from goldgate.metrics.base import Metric, MetricOptions, Stats, option, ratio_scores

if TYPE_CHECKING:  # annotations only: the module imports numpy where it computes
    import numpy as np
    import numpy.typing as npt

    from goldgate.metrics.text_batch import TextBatch

NORMALIZER_VERSION = "v1"

# Deletes exactly the characters of ``string.punctuation`` (a regex is faster than translate).
_ASCII_PUNCTUATION = re.compile(f"[{re.escape(string.punctuation)}]+")
# The SQuAD scripts' own pattern; Python 3's str patterns are Unicode-aware, as theirs were.
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def _white_space_fix(text: str) -> str:
    return " ".join(text.split())


def _strip_unicode_punct(text: str) -> str:
    return "".join(ch for ch in text if not unicodedata.category(ch).startswith("P"))


def _nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


#: The steps a custom normaliser may list. Each name's behaviour is fixed for ``v1``.
STEPS: dict[str, Callable[[str], str]] = {
    "lower": str.lower,
    "casefold": str.casefold,
    "strip": str.strip,
    "white_space_fix": _white_space_fix,
    # ASCII ``string.punctuation`` deleted, as the SQuAD script does.
    "strip_punct": lambda text: _ASCII_PUNCTUATION.sub("", text),
    # Every Unicode punctuation character (category P*) deleted, for non-English answers.
    "strip_unicode_punct": _strip_unicode_punct,
    "remove_articles": lambda text: _ARTICLES.sub(" ", text),
    "nfc": _nfc,
    "nfkc": _nfkc,
}

_SQUAD_STEPS = ("lower", "strip_punct", "remove_articles", "white_space_fix")


@dataclass(frozen=True)
class Normalizer:
    """A named, versioned text normalisation; ``squad_v2_empty`` selects v2.0's empty rules."""

    name: str
    steps: tuple[str, ...]
    squad_v2_empty: bool = False

    @property
    def label(self) -> str:
        """The signature value, e.g. ``squad.v1`` or ``custom.v1[lower+nfkc]``."""
        if self.name == "custom":
            return f"custom.{NORMALIZER_VERSION}[{'+'.join(self.steps)}]"
        return f"{self.name}.{NORMALIZER_VERSION}"

    def function(self) -> Callable[[str], str]:
        """The normalisation as one function of a text."""
        if self.steps == _SQUAD_STEPS:
            # One expression for the default, the hot path on large QA sets; equal to the steps.
            punctuation, articles = _ASCII_PUNCTUATION.sub, _ARTICLES.sub
            return lambda text: " ".join(articles(" ", punctuation("", text.lower())).split())
        functions = tuple(STEPS[step] for step in self.steps)

        def normalise(text: str) -> str:
            for step in functions:
                text = step(text)
            return text

        return normalise


NORMALIZERS: dict[str, Normalizer] = {
    "squad": Normalizer("squad", _SQUAD_STEPS),
    "squad_v2": Normalizer("squad_v2", _SQUAD_STEPS, squad_v2_empty=True),
    "strict": Normalizer("strict", ("strip",)),
    "lower": Normalizer("lower", ("lower", "white_space_fix")),
}


def _check_steps(steps: Sequence[str]) -> None:
    if not steps:
        raise ValueError("a normalizer list needs at least one step (or use 'strict')")
    for step in steps:
        if step not in STEPS:
            hint = did_you_mean(step, list(STEPS))
            raise ValueError(f"unknown normalizer step {step!r}{hint}; steps: {', '.join(STEPS)}")


def resolve_normalizer(value: str | Sequence[str]) -> Normalizer:
    """A normaliser from a name, a ``+``-joined string of steps or a list of steps."""
    if isinstance(value, str):
        if value in NORMALIZERS:
            return NORMALIZERS[value]
        if "+" not in value and value not in STEPS:
            hint = did_you_mean(value, [*NORMALIZERS, *STEPS])
            raise ValueError(
                f"unknown normalizer {value!r}{hint}; named: {', '.join(NORMALIZERS)}; "
                f"or a list of steps from: {', '.join(STEPS)}"
            )
        value = [step.strip() for step in value.split("+")]
    steps = tuple(value)
    _check_steps(steps)
    for named in NORMALIZERS.values():
        if named.steps == steps and not named.squad_v2_empty:
            return named
    return Normalizer("custom", steps)


def _known_normalizer(value: Any) -> Any:
    # Run on the raw value, so a bad name fails when the config is read, not mid-run.
    if isinstance(value, list | tuple):
        value = tuple(value)
        if not all(isinstance(step, str) for step in value):
            raise ValueError("normalizer steps must be names (strings)")
    if isinstance(value, str | tuple):
        resolve_normalizer(value)
    return value


class ExactOptions(MetricOptions):
    """Options of ``exact_match`` and ``token_f1``."""

    normalizer: str | tuple[str, ...] = option(default="squad", parse=_known_normalizer)


_Bag = tuple[dict[str, int], int]


def _bag(text: str) -> _Bag:
    """Token multiplicities and token count of a normalised text.

    Built per comparison, not kept: an evaluation holds every distinct answer at once, and
    exact match needs none of this.
    """
    tokens = text.split()
    # Answers are a few tokens long: a comprehension beats Counter there, not beyond.
    if len(tokens) <= 16:
        return {token: tokens.count(token) for token in tokens}, len(tokens)
    return dict(Counter(tokens)), len(tokens)


# Shared statistics rows: a corpus holds one row per example, and these two cover them all.
_RIGHT: Stats = (1.0, 1.0)
_WRONG: Stats = (0.0, 1.0)


class _NormalisedMetric(Metric[ExactOptions]):
    Options: ClassVar[type[MetricOptions]] = ExactOptions

    def __init__(self, options: ExactOptions) -> None:
        super().__init__(options)
        self.normalizer = resolve_normalizer(options.normalizer)
        self._normalise = self.normalizer.function()

    def preprocess_key(self) -> Any:
        # Exact match and token F1 with one normaliser share the normalised texts.
        return ("goldgate.exact", self.normalizer)

    def preprocess(self, text: str) -> str:
        return self._normalise(text)

    def _token_ids(self, batch: TextBatch) -> tuple[Any, Any]:
        """The whitespace tokens of the batch's normalised texts, as CSR token ids (shared by
        exact match and token F1: a normalised text is its tokens joined by one space, so
        two are equal exactly when their token lists are)."""
        from goldgate.metrics.ngram import batch_tokens

        texts = batch.texts

        def build() -> tuple[Any, Any]:
            if self.normalizer.steps == _SQUAD_STEPS:
                whole = batch_tokens.joined(texts, padding=" ")
                if whole is not None:
                    # Lowercasing and both deletions look at neighbours only, which the
                    # separator's spaces keep apart (see batch_tokens): one pass does all.
                    cleaned = _ARTICLES.sub(" ", _ASCII_PUNCTUATION.sub("", whole.lower()))
                    found = batch_tokens.split_items(cleaned.split(), len(texts))
                    if found is not None:
                        return found
            normalised = self._prepared(batch)
            return batch_tokens.token_items(normalised, str.split, str.split, padding=" ")

        return batch.shared(self.preprocess_key(), "token-ids", build)  # type: ignore[no-any-return]

    def _prepared(self, batch: TextBatch) -> list[str]:
        """The batch's texts normalised, one by one (shared)."""
        normalise = self._normalise
        prepared: list[str] = batch.shared(
            self.preprocess_key(), "prepared", lambda: [normalise(t) for t in batch.texts]
        )
        return prepared

    def golds(self, references: Sequence[str]) -> Sequence[str]:
        """The references an answer is compared with (v2.0 drops empty ones)."""
        if self.normalizer.squad_v2_empty:
            return [ref for ref in references if ref] or [""]
        return references

    def score_stats(self, stats: Sequence[float]) -> float:
        return 100.0 * stats[0] / stats[1] if stats[1] else 0.0

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("norm", self.normalizer.label)]

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(_NormalisedMetric):
            return super().example_scores(stats)
        return ratio_scores(stats[:, 0], stats[:, 1], 100.0)


class ExactMatch(_NormalisedMetric):
    """Exact match: 100 when the normalised candidate equals a normalised reference, else 0."""

    name = "exact_match"
    stat_names = ("correct", "count")
    binary = True

    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example of a batch at once: normalised texts compared as ids."""
        if self.normalizer.squad_v2_empty:
            return None  # v2.0 drops empty references example by example
        import numpy as np

        from goldgate.metrics.ngram import batch_ngrams

        chunk = batch_ngrams.batch_pairs(batch)
        candidates = chunk.candidates[chunk.example]
        if self.normalizer.steps[-1] == "white_space_fix":
            # The normalised texts are their tokens joined by single spaces: equal texts are
            # equal token lists, compared from the token ids token F1 shares.
            items, offsets = self._token_ids(batch)
            lengths = np.diff(offsets)
            alike = np.flatnonzero(lengths[candidates] == lengths[chunk.references])
            candidate_items, sizes = batch_ngrams.gather(items, offsets, candidates[alike])
            reference_items, _ = batch_ngrams.gather(items, offsets, chunk.references[alike])
            differ = np.bincount(
                np.repeat(np.arange(len(alike)), sizes),
                weights=candidate_items != reference_items,
                minlength=len(alike),
            )
            equal = np.zeros(len(chunk.references), dtype=bool)
            equal[alike] = differ == 0
        else:
            # Distinct texts may normalise alike: one id per normalised text.
            index: dict[str, int] = {}
            add = index.setdefault
            ids = np.array([add(t, len(index)) for t in self._prepared(batch)], np.int64)
            equal = ids[candidates] == ids[chunk.references]
        correct = np.logical_or.reduceat(equal, chunk.offsets[:-1])
        return np.stack([correct.astype(np.float64), np.ones(len(correct))], axis=1)

    def example_stats(self, candidate: str, references: Sequence[str]) -> Stats:
        return _RIGHT if candidate in self.golds(references) else _WRONG

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        return {"correct": int(stats[0]), "count": int(stats[1])}


def f1_v1(candidate: _Bag, reference: _Bag) -> float:
    """SQuAD v1.1 ``f1_score`` on 0–1: token-overlap F1, 0 without overlap."""
    (small, candidate_length), (large, reference_length) = candidate, reference
    if len(small) > len(large):
        small, large = large, small
    num_same = 0
    for token, count in small.items():
        other = large.get(token)
        if other:
            num_same += count if count < other else other
    if num_same == 0:
        return 0.0
    # The script's exact arithmetic, so sums agree to the last bit.
    precision = 1.0 * num_same / candidate_length
    recall = 1.0 * num_same / reference_length
    return (2 * precision * recall) / (precision + recall)


def f1_v2(candidate: _Bag, reference: _Bag) -> float:
    """SQuAD v2.0 ``compute_f1`` on 0–1: an empty side scores 1 only against another empty."""
    if candidate[1] == 0 or reference[1] == 0:
        return float(candidate[1] == reference[1])
    return f1_v1(candidate, reference)


class TokenF1(_NormalisedMetric):
    """Token F1: the best multiset-overlap F1 between the normalised candidate and a reference."""

    name = "token_f1"
    stat_names = ("f1_sum", "count")

    def __init__(self, options: ExactOptions) -> None:
        super().__init__(options)
        self._f1 = f1_v2 if self.normalizer.squad_v2_empty else f1_v1

    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example of a batch at once: token overlaps from ``batch_ngrams`` (order 1)."""
        if self.normalizer.squad_v2_empty:
            return None  # v2.0's rules for empty answers are example by example
        import numpy as np

        from goldgate.metrics.ngram import batch_ngrams

        items, offsets = self._token_ids(batch)
        chunk = batch_ngrams.batch_pairs(batch)
        found = batch_ngrams.pair_matches(items, offsets, chunk, 1)
        if found is None:
            return None
        same = found[0][chunk.example, chunk.side].astype(np.float64)
        lengths = np.diff(offsets)
        # The script's arithmetic (see f1_v1); no overlap scores 0, and so does no token.
        with np.errstate(invalid="ignore", divide="ignore"):
            precision = 1.0 * same / lengths[chunk.candidates][chunk.example]
            recall = 1.0 * same / lengths[chunk.references]
            f1 = np.where(same > 0, (2 * precision * recall) / (precision + recall), 0.0)
        best = np.maximum.reduceat(f1, chunk.offsets[:-1])
        return np.stack([best, np.ones(len(best))], axis=1)

    def example_stats(self, candidate: str, references: Sequence[str]) -> Stats:
        f1, best = self._f1, 0.0
        candidate_bag = _bag(candidate)
        for ref in self.golds(references):
            # F1 never exceeds 1.0 (not even by rounding), so an identical reference ends the
            # search; an empty pair scores 1 only under v2.0's rules, so f1 decides that case.
            if ref == candidate and candidate_bag[1]:
                return _RIGHT
            value = f1(candidate_bag, _bag(ref))
            if value > best:
                best = value
        return (best, 1.0)

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        return {"count": int(stats[1])}
