"""A chunk of examples as distinct texts and indices, for metrics that score a chunk at once.

Each distinct text is preprocessed once however often it occurs (a candidate equal to its
reference, an answer shared by many questions), and metrics that agree on a preprocessing
share its result through :meth:`TextBatch.shared`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from itertools import accumulate, chain
from typing import Any


class TextBatch:
    """Candidates and references of a chunk, as indices into its distinct texts."""

    __slots__ = ("_shared", "candidates", "reference_offsets", "references", "texts")

    def __init__(self, candidates: Sequence[str], references: Sequence[Sequence[str]]) -> None:
        # Every loop below runs in C (map, accumulate, dict.fromkeys): a chunk has thousands
        # of texts, and a Python-level loop over them is most of this constructor's time.
        flat_texts = list(chain.from_iterable(references))
        distinct = dict.fromkeys(chain(candidates, flat_texts))  # in order of first appearance
        index = dict(zip(distinct, range(len(distinct)), strict=True))
        self.candidates = list(map(index.__getitem__, candidates))
        #: reference indices of every example, one after another
        self.references = list(map(index.__getitem__, flat_texts))
        #: example i's references are ``references[reference_offsets[i]:reference_offsets[i+1]]``
        self.reference_offsets = [0, *accumulate(map(len, references))]
        #: the distinct texts, in order of first appearance
        self.texts = list(index)
        self._shared: dict[Hashable, dict[str, Any]] = {}

    def __len__(self) -> int:
        return len(self.candidates)

    def shared(self, key: Hashable, name: str, build: Callable[[], Any]) -> Any:
        """A value derived from the texts, built once for every metric with preprocess ``key``."""
        values = self._shared.setdefault(key, {})
        try:
            return values[name]
        except KeyError:
            value = values[name] = build()
            return value

    def peek(self, key: Hashable, name: str) -> Any:
        """A shared value if it was built, else None."""
        return self._shared.get(key, {}).get(name)

    def put(self, key: Hashable, name: str, value: Any) -> None:
        """Share a value (replacing one of that name)."""
        self._shared.setdefault(key, {})[name] = value

    def release(self, key: Hashable) -> None:
        """Forget the values of a preprocess key no later metric shares."""
        self._shared.pop(key, None)

    def example_references(self, example: int) -> list[int]:
        """The reference indices of one example."""
        offsets = self.reference_offsets
        return self.references[offsets[example] : offsets[example + 1]]
