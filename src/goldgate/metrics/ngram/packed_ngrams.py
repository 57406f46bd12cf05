"""N-gram multisets packed into sorted int64 keys, matched with a handful of NumPy calls.

Each item (character or token) gets a small id from a process-wide vocabulary, starting at 1.
An n-gram of ids ``a, b, c`` becomes the integer ``a·2^(2k) + b·2^k + c`` with k bits per
item, so equal n-grams get equal keys, and since no id is 0 an n-gram of order n lies in
``[2^(k(n-1)), 2^(kn))``: the order can be read off the key. A text whose ids do not fit in
k bits (``63 // max_order``) is not packed and its caller falls back to dict counting, which
gives the same integers. The vocabularies only grow, so keys packed at any time compare —
within one process: ids are assigned in order of first sight, so keys made in another
process (say, a worker pool) must not be mixed with these.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from functools import cache
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

Ints = NDArray[np.int64]


class Vocabulary(dict[Hashable, int]):
    """Item -> id from 1, assigned on first sight; safe to share between threads."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)

    def __missing__(self, item: Hashable) -> int:
        # next() and setdefault are each atomic, so two threads never hand out one id twice.
        return self.setdefault(item, next(self._ids))


#: Code point -> id, for ``str.translate``; shared by every metric in the process.
CHARACTER_IDS = Vocabulary()
#: Token -> id; shared by every metric in the process.
TOKEN_IDS = Vocabulary()


class Packed(NamedTuple):
    """A text's n-grams: sorted distinct keys and their counts."""

    keys: Ints
    counts: Ints


def bits_per_item(max_order: int) -> int:
    """How many bits one item gets so that max_order of them fit in a non-negative int64."""
    return 63 // max_order


@cache
def _order_starts(max_order: int) -> Ints:
    bits = bits_per_item(max_order)
    return np.array([1 << (bits * n) for n in range(max_order)], dtype=np.int64)


_EMPTY: Ints = np.zeros(0, dtype=np.int64)


def character_ids(text: str, max_order: int) -> Ints | None:
    """The ids of a text's characters, or None when one does not fit the packing."""
    if not text:
        return _EMPTY
    try:
        mapped = text.translate(CHARACTER_IDS)
    except ValueError:  # pragma: no cover - an id past U+10FFFF: every code point was seen
        return None
    if ord(max(mapped)) >> bits_per_item(max_order):
        return None
    # 'surrogatepass': past 55,295 distinct characters an id may be a surrogate code point.
    raw = np.frombuffer(mapped.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    return raw.astype(np.int64)


def token_ids(tokens: list[str], max_order: int) -> Ints | None:
    """The ids of a token list, or None when one does not fit the packing."""
    if not tokens:
        return _EMPTY
    ids = np.fromiter(map(TOKEN_IDS.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    if int(ids.max()) >> bits_per_item(max_order):
        return None
    return ids


def pack(ids: Ints, max_order: int) -> Packed:
    """All n-grams of orders 1..max_order of an id sequence (ids must fit ``bits_per_item``)."""
    if not len(ids):
        return Packed(_EMPTY, _EMPTY)
    bits = bits_per_item(max_order)
    parts = [ids]
    previous = ids
    for n in range(1, min(max_order, len(ids))):
        previous = previous[:-1] << bits
        previous |= ids[n:]
        parts.append(previous)
    keys = np.concatenate(parts) if len(parts) > 1 else ids.copy()
    keys.sort()
    # Run boundaries of the sorted keys give the distinct keys and their counts.
    edges = np.empty(len(keys) + 1, dtype=bool)
    edges[0] = edges[-1] = True
    np.not_equal(keys[1:], keys[:-1], out=edges[1:-1])
    # Array methods rather than np.flatnonzero/np.diff: those are Python wrappers, and their
    # overhead is most of the cost on arrays this small.
    starts = edges.nonzero()[0]
    return Packed(keys[starts[:-1]], starts[1:] - starts[:-1])


def counts_in(hyp: Packed, ref: Packed) -> Ints:
    """For each of the hypothesis's distinct keys, its count in the reference (0 if absent)."""
    if not len(ref.keys):
        return np.zeros(len(hyp.keys), dtype=np.int64)
    at = ref.keys.searchsorted(hyp.keys)
    np.minimum(at, len(ref.keys) - 1, out=at)
    found = ref.keys[at] == hyp.keys
    return np.where(found, ref.counts[at], 0)


def clipped_matches(hyp: Packed, refs: Sequence[Packed], max_order: int) -> list[int]:
    """Per order, Σ min(hypothesis count, largest count in one reference)."""
    if not len(hyp.keys):
        return [0] * max_order
    best = counts_in(hyp, refs[0])
    for ref in refs[1:]:
        np.maximum(best, counts_in(hyp, ref), out=best)
    clipped = np.minimum(hyp.counts, best)
    orders = _order_starts(max_order).searchsorted(hyp.keys, side="right") - 1
    sums = np.bincount(orders, weights=clipped, minlength=max_order)
    # bincount sums in float64, exact for counts below 2^53.
    return [int(total) for total in sums]
