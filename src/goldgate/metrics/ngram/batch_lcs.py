"""LCS lengths of many pairs of token sequences at once, for ROUGE-L over a chunk.

``lcs.lcs_length`` advances one row of the LCS table per token with four big-integer
operations. Here the row of every pair is one ``uint64`` (the shorter side, up to 64 tokens,
holds the bits), and one NumPy step advances the row of every pair still running: a chunk of
short texts costs a few NumPy calls per token position instead of a Python loop per pair.
The arithmetic is the same as ``lcs_length``'s, bit for bit: ``hit`` is a subset of ``row``,
so ``row - hit`` never borrows, and a carry out of ``row + hit`` only ever moves upwards,
above the bits that are counted; wrapping at 64 bits therefore loses nothing that matters.
Pairs whose shorter side is longer than 64 tokens, or whose longer side is very long, go
through ``lcs_length`` one by one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from goldgate.metrics.ngram.batch_ngrams import gather, renumber
from goldgate.metrics.ngram.lcs import lcs_length, position_masks

Ints = NDArray[np.int64]

#: The widest side a ``uint64`` row holds.
_WORD = 64
#: Pairs whose longer side has more tokens than this are scored one by one (the batched loop
#: runs once per position of the longest text in the chunk).
LONG_SIDE = 1024

_POPCOUNT = np.array([bin(byte).count("1") for byte in range(256)], dtype=np.int64)


def _popcount(values: NDArray[np.uint64]) -> Ints:
    count = getattr(np, "bitwise_count", None)  # NumPy >= 2.0
    if count is not None:
        return np.asarray(count(values), dtype=np.int64)
    as_bytes = values.view(np.uint8).reshape(len(values), 8)
    return np.asarray(_POPCOUNT[as_bytes].sum(axis=1), dtype=np.int64)


def lcs_lengths(items: Ints, offsets: Ints, left: Ints, right: Ints) -> Ints:
    """The LCS length of text ``left[p]`` and text ``right[p]`` for every pair ``p``.

    Texts are stored as CSR: text t's item ids are ``items[offsets[t]:offsets[t + 1]]``.
    """
    lengths = np.diff(offsets)
    left_len, right_len = lengths[left], lengths[right]
    # The LCS is symmetric: the shorter side gives the bits, the longer side the steps.
    swap = left_len > right_len
    short = np.where(swap, right, left)
    long = np.where(swap, left, right)
    short_len = np.minimum(left_len, right_len)
    long_len = np.maximum(left_len, right_len)
    # A text's LCS with itself is the text (a right answer: most pairs of many sets).
    same = left == right
    out = np.where(same, left_len, 0)
    pending = (short_len > 0) & ~same
    batched = pending & (short_len <= _WORD) & (long_len <= LONG_SIDE)
    one_by_one = np.flatnonzero(pending & ~batched)
    for p in one_by_one.tolist():
        a = items[offsets[short[p]] : offsets[short[p] + 1]].tolist()
        b = items[offsets[long[p]] : offsets[long[p] + 1]].tolist()
        out[p] = lcs_length(position_masks(a), len(a), b)
    chosen = np.flatnonzero(batched)
    if len(chosen):
        out[chosen] = _batched(items, offsets, short[chosen], long[chosen])
    return out


def _batched(items: Ints, offsets: Ints, short: Ints, long: Ints) -> Ints:
    """``lcs_lengths`` of pairs whose short side has 1..64 tokens."""
    pairs = len(short)
    short_items, short_len = gather(items, offsets, short)
    long_items, long_len = gather(items, offsets, long)
    # Dense ids, so that (pair, item) fits one int64 key.
    dense, distinct = renumber(np.concatenate((short_items, long_items)))
    short_items, long_items = dense[: len(short_items)], dense[len(short_items) :]
    width = distinct + 1
    # Every (pair, item) of a short side, with the bitmask of its positions.
    short_pair = np.repeat(np.arange(pairs, dtype=np.int64), short_len)
    position = np.arange(len(short_items), dtype=np.int64) - np.repeat(
        np.cumsum(short_len) - short_len, short_len
    )
    keys = short_pair * width + short_items
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    bits = np.left_shift(np.uint64(1), position[order].astype(np.uint64))
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    unique_keys = keys[starts]
    masks = np.bitwise_or.reduceat(bits, starts)
    # The mask of every position of every long side (0 where its item is not in the short side).
    long_pair = np.repeat(np.arange(pairs, dtype=np.int64), long_len)
    wanted = long_pair * width + long_items
    at = np.minimum(unique_keys.searchsorted(wanted), len(unique_keys) - 1)
    step_masks = np.where(unique_keys[at] == wanted, masks[at], np.uint64(0))
    # Pairs by decreasing long side: at step j the pairs still running are a prefix.
    by_length = np.argsort(-long_len, kind="stable")
    starts_long = (np.cumsum(long_len) - long_len)[by_length]
    sorted_len = long_len[by_length]
    full = np.right_shift(np.uint64(0xFFFF_FFFF_FFFF_FFFF), (_WORD - short_len).astype(np.uint64))
    row = full[by_length].copy()
    steps = int(sorted_len[0]) if pairs else 0
    running = np.searchsorted(-sorted_len, -np.arange(steps, dtype=np.int64), side="left")
    for j in range(steps):
        k = int(running[j])
        current = row[:k]
        hit = current & step_masks[starts_long[:k] + j]
        row[:k] = (current + hit) | (current - hit)
    counted: NDArray[np.uint64] = np.bitwise_and(row, full[by_length])
    lcs = np.empty(pairs, dtype=np.int64)
    lcs[by_length] = short_len[by_length] - _popcount(counted)
    return lcs
