"""N-gram matches of a whole chunk of examples at once: one sort, then a few NumPy passes.

Per example, BLEU, chrF and ROUGE-N need, for every n-gram order, how many n-grams the
candidate shares with each reference (Σ min(count in candidate, count in reference)) and,
for BLEU, with the references' largest counts (Σ min(count in candidate, max over
references)). Doing that text by text costs a dozen NumPy calls per text, which is most of
the time on short texts; here every text of a chunk is handled by the same few calls.

Every position of every text becomes one int64 key::

    example (high bits) | the N items from this position on (0 past the text's end) | side

where *side* is 0 for the candidate and j for reference j, and items are ids from 1. After
one sort, the keys of equal (example, first n items) are adjacent for every order n at once
(the key shifted right keeps the sort order), so the counts per side of every n-gram of
every example are run lengths, and the matches are sums of their minima. A position with
fewer than n items left has a 0 as its n-th item and is skipped for order n.

Examples go in blocks small enough that a key fits 63 bits; item ids are renumbered densely
within a block when the process-wide ids are too wide. A block that still does not fit (a
very high order over a large vocabulary) is reported as ``None`` so the caller falls back to
text-by-text counting.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from goldgate.metrics.ngram.packed_ngrams import TOKEN_IDS
from goldgate.metrics.text_batch import TextBatch

Ints = NDArray[np.int64]

#: Positions per block: bounds the memory of a block's few int64 arrays (~8 MB each).
BLOCK_POSITIONS = 1 << 20
_KEY_BITS = 63


class Layout(NamedTuple):
    """The texts of a chunk's examples, candidate first, then each reference, per example."""

    items: Ints  #: item ids (>= 1) of every sequence, one sequence after another
    lengths: Ints  #: items per sequence
    example: Ints  #: the example of each sequence
    side: Ints  #: 0 for the candidate, j for reference j (1-based)
    examples: int  #: number of examples
    sides: int  #: 1 + the largest number of references of an example


def token_items(texts: Sequence[Sequence[str]]) -> tuple[Ints, Ints]:
    """Token ids (process-wide, from 1) of token lists, as CSR: items and offsets."""
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(tokens) for tokens in texts], out=offsets[1:])
    flat = [token for tokens in texts for token in tokens]
    items = np.fromiter(map(TOKEN_IDS.__getitem__, flat), dtype=np.int64, count=len(flat))
    return items, offsets


def gather(items: Ints, offsets: Ints, texts: Ints) -> tuple[Ints, Ints]:
    """Items and lengths of the texts ``texts`` (indices) from a CSR store (items, offsets)."""
    starts = offsets[texts]
    lengths = offsets[texts + 1] - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64), lengths
    out_starts = np.cumsum(lengths) - lengths
    index = np.repeat(starts - out_starts, lengths) + np.arange(total, dtype=np.int64)
    return items[index], lengths


class Pairs(NamedTuple):
    """A chunk's examples as index arrays into its texts, and its (example, reference) pairs."""

    candidates: Ints  #: example e's candidate text
    references: Ints  #: every reference text, example after example: one per pair
    offsets: Ints  #: example e's references are ``references[offsets[e]:offsets[e + 1]]``
    example: Ints  #: each pair's example
    side: Ints  #: each pair's reference number within its example, from 1 (0 is the candidate)


def pairs(
    candidates: Sequence[int], references: Sequence[int], reference_offsets: Sequence[int]
) -> Pairs:
    """The :class:`Pairs` of a chunk given as text indices (a ``TextBatch``'s three lists)."""
    candidate_array = np.asarray(candidates, dtype=np.int64)
    reference_array = np.asarray(references, dtype=np.int64)
    offsets = np.asarray(reference_offsets, dtype=np.int64)
    example = np.repeat(np.arange(len(candidate_array), dtype=np.int64), np.diff(offsets))
    side = np.arange(len(reference_array), dtype=np.int64) - offsets[example] + 1
    return Pairs(candidate_array, reference_array, offsets, example, side)


def batch_pairs(batch: TextBatch) -> Pairs:
    """The :class:`Pairs` of a ``TextBatch``, built once for all its metrics."""
    return batch.shared(  # type: ignore[no-any-return]
        ("batch_ngrams",),
        "pairs",
        lambda: pairs(batch.candidates, batch.references, batch.reference_offsets),
    )


def best_reference(
    chunk: Pairs, rows: NDArray[np.float64], scores: Callable[[], NDArray[np.float64]]
) -> NDArray[np.float64]:
    """Per example, the row of the pair with the highest score; the first on a tie (as
    ``np.argmax``, and sacrebleu's and rouge-score's strict ``>``). ``rows`` has one row per
    pair; ``scores()`` gives one score per pair, asked only when an example has several."""
    if len(chunk.references) == len(chunk.candidates):  # one reference each
        return rows
    table = np.full((len(chunk.candidates), int(np.diff(chunk.offsets).max())), -1.0)
    table[chunk.example, chunk.side - 1] = scores()
    best: NDArray[np.float64] = rows[chunk.offsets[:-1] + table.argmax(axis=1)]
    return best


def layout(items: Ints, offsets: Ints, chunk: Pairs) -> Layout:
    """The example layout from texts stored as CSR (``items``, ``offsets``, one row per text)."""
    n = len(chunk.candidates)
    per_example = np.diff(chunk.offsets)
    sequences = n + len(chunk.references)
    order = np.empty(sequences, dtype=np.int64)
    first = np.arange(n, dtype=np.int64) + chunk.offsets[:-1]
    order[first] = chunk.candidates
    order[first[chunk.example] + chunk.side] = chunk.references
    example = np.repeat(np.arange(n, dtype=np.int64), per_example + 1)
    side = np.arange(sequences, dtype=np.int64) - first[example]
    seq_items, lengths = gather(items, offsets, order)
    sides = 1 + (int(per_example.max()) if n else 0)
    return Layout(seq_items, lengths, example, side, n, sides)


def pair_matches(
    items: Ints, offsets: Ints, chunk: Pairs, max_order: int, *, clip: bool = False
) -> Ints | None:
    """``matches`` of a chunk's layout, with the pairs whose reference is the candidate's
    own text left out of the sort and filled in directly.

    A text shares every one of its n-grams with itself, so such a pair matches
    ``max(0, length - n + 1)`` n-grams of order n, and so does the clipped count of an
    example that has one (no reference count is below the candidate's own there). On sets
    where most answers are right, most examples need no sorting at all.
    """
    examples = len(chunk.candidates)
    same = chunk.references == chunk.candidates[chunk.example]
    if not same.any():
        return matches(layout(items, offsets, chunk), max_order, clip=clip)
    sides = 1 + int(np.diff(chunk.offsets).max())
    out = np.zeros((max_order, examples, sides), dtype=np.int64)
    lengths = offsets[chunk.candidates + 1] - offsets[chunk.candidates]
    grams = np.maximum(lengths[None, :] - np.arange(max_order, dtype=np.int64)[:, None], 0)
    example, side = chunk.example[same], chunk.side[same]
    out[:, example, side] = grams[:, example]
    has_same = np.zeros(examples, dtype=bool)
    has_same[example] = True
    if clip:
        out[:, has_same, 0] = grams[:, has_same]
    rest = ~same
    if not rest.any():
        return out
    # The other pairs, as a smaller chunk of the examples that have any.
    kept = np.zeros(examples, dtype=bool)
    kept[chunk.example[rest]] = True
    kept_examples = np.flatnonzero(kept)
    renumbered = np.cumsum(kept) - 1
    sub_example = renumbered[chunk.example[rest]]
    sub_offsets = np.zeros(len(kept_examples) + 1, dtype=np.int64)
    np.cumsum(np.bincount(sub_example, minlength=len(kept_examples)), out=sub_offsets[1:])
    sub_side = np.arange(len(sub_example), dtype=np.int64) - sub_offsets[sub_example] + 1
    sub = Pairs(
        chunk.candidates[kept_examples], chunk.references[rest], sub_offsets, sub_example, sub_side
    )
    found = matches(layout(items, offsets, sub), max_order, clip=clip)
    if found is None:
        return None
    out[:, chunk.example[rest], chunk.side[rest]] = found[:, sub_example, sub_side]
    if clip:
        # Examples without an identical reference have all their references in ``sub``.
        alone = ~has_same[kept_examples]
        out[:, kept_examples[alone], 0] = found[:, np.flatnonzero(alone), 0]
    return out


#: Largest id renumbered through a lookup table rather than a sort.
_TABLE_LIMIT = 1 << 22


def renumber(items: Ints) -> tuple[Ints, int]:
    """Items renumbered densely from 1 in their order, and how many distinct ones there are."""
    if not len(items):
        return items, 0
    largest = int(items.max())
    if largest < _TABLE_LIMIT:
        # A table of the ids present: linear time, where np.unique would sort.
        table = np.zeros(largest + 1, dtype=np.int64)
        table[items] = 1
        np.cumsum(table, out=table)
        return table[items], int(table[-1])
    distinct, inverse = np.unique(items, return_inverse=True)
    return inverse.astype(np.int64).reshape(-1) + 1, len(distinct)


def _bits(value: int) -> int:
    return max(1, int(value).bit_length())


def matches(data: Layout, max_order: int, *, clip: bool = False) -> Ints | None:
    """``(max_order, examples, sides)`` match counts, or None when a key cannot fit 63 bits.

    ``[n-1, e, j]`` for j >= 1 is Σ min(count in the candidate, count in reference j) over
    the n-grams of example e; with ``clip``, ``[n-1, e, 0]`` is Σ min(count in the
    candidate, largest count in one reference) (BLEU's clipped matches), else 0.
    """
    out = np.zeros((max_order, data.examples, data.sides), dtype=np.int64)
    if not len(data.items) or max_order < 1:
        return out
    side_bits = _bits(data.sides - 1)
    # Sequence boundaries by example, so blocks hold whole examples.
    seq_end = np.cumsum(data.lengths)
    example_start_seq = np.searchsorted(data.example, np.arange(data.examples + 1))
    example_pos = np.concatenate(([0], seq_end))[example_start_seq]
    start = 0
    while start < data.examples:
        stop = _block_stop(example_pos, start, data.examples)
        done = _match_block(data, out, start, stop, example_start_seq, example_pos, side_bits, clip)
        if done is None:
            return None
        start = done
    return out


def _block_stop(example_pos: Ints, start: int, examples: int) -> int:
    limit = example_pos[start] + BLOCK_POSITIONS
    stop = int(np.searchsorted(example_pos, limit, side="right")) - 1
    return min(examples, max(stop, start + 1))


def _match_block(
    data: Layout,
    out: Ints,
    start: int,
    stop: int,
    example_start_seq: Ints,
    example_pos: Ints,
    side_bits: int,
    clip: bool,
) -> int | None:
    """Fill ``out`` for examples ``start``… (as many as fit); the next example to do."""
    order = out.shape[0]
    lo, hi = int(example_pos[start]), int(example_pos[stop])
    items = data.items[lo:hi]
    item_bits = _bits(int(items.max())) if len(items) else 1
    if order * item_bits + side_bits >= _KEY_BITS:
        items, distinct = renumber(items)
        item_bits = _bits(distinct)
    example_bits = _KEY_BITS - order * item_bits - side_bits
    if example_bits < 0:
        if stop - start > 1:
            return _match_block(
                data, out, start, start + (stop - start) // 2, example_start_seq, example_pos,
                side_bits, clip,
            )  # fmt: skip
        return None
    if stop - start > (1 << example_bits):
        stop = start + (1 << example_bits)
        hi = int(example_pos[stop])
        items = items[: hi - lo]
    seq_lo, seq_hi = int(example_start_seq[start]), int(example_start_seq[stop])
    lengths = data.lengths[seq_lo:seq_hi]
    count = len(items)
    if count:
        keys = _keys(items, lengths, order, item_bits)
        keys <<= side_bits
        keys |= np.repeat(data.side[seq_lo:seq_hi], lengths)
        local = np.repeat(data.example[seq_lo:seq_hi] - start, lengths)
        keys |= local << (order * item_bits + side_bits)
        keys.sort()
        _count_orders(keys, out[:, start:stop], order, item_bits, side_bits, data.sides, clip)
    return stop


def _keys(items: Ints, lengths: Ints, order: int, item_bits: int) -> Ints:
    """Per position, its ``order`` items packed high to low, 0 past the end of its text."""
    count = len(items)
    keys = items.copy()
    if order == 1:
        return keys
    ends = np.repeat(np.cumsum(lengths), lengths)
    remaining = ends - np.arange(count, dtype=np.int64)
    padded = np.concatenate((items, np.zeros(order, dtype=np.int64)))
    for t in range(1, order):
        keys <<= item_bits
        keys |= np.where(remaining > t, padded[t : t + count], 0)
    return keys


def _count_orders(
    keys: Ints, out: Ints, order: int, item_bits: int, side_bits: int, sides: int, clip: bool
) -> None:
    """Add every order's matches of a block's sorted keys to ``out`` (orders, examples, sides)."""
    side_mask = (1 << side_bits) - 1
    item_mask = (1 << item_bits) - 1
    side = keys & side_mask
    examples = out.shape[1]
    for n in range(1, order + 1):
        group = keys >> (side_bits + item_bits * (order - n))
        valid = (group & item_mask) != 0  # the n-th item exists: the position has an n-gram
        if not valid.all():
            group = group[valid]
            group_side = side[valid]
        else:
            group_side = side
        if not len(group):
            continue
        starts = np.empty(len(group), dtype=bool)
        starts[0] = True
        np.not_equal(group[1:], group[:-1], out=starts[1:])
        # A running count of the starts (cast first: NumPy's cumsum of booleans is slow).
        index = starts.astype(np.int64)
        np.cumsum(index, out=index)
        index -= 1
        groups = int(index[-1]) + 1
        # Where each example's groups begin (groups are sorted by example).
        first = group.searchsorted(np.arange(examples + 1, dtype=np.int64) << (item_bits * n))
        bounds = np.append(index, groups)[first]
        index *= sides
        index += group_side
        counts = np.bincount(index, minlength=groups * sides).reshape(groups, sides)
        hyp = counts[:, 0].copy()
        if clip and sides > 1:
            best = counts[:, 1].copy()
            for j in range(2, sides):
                np.maximum(best, counts[:, j], out=best)
            counts[:, 0] = best
        else:
            counts[:, 0] = 0
        np.minimum(counts, hyp[:, None], out=counts)
        # Per example, the sum of its groups' rows. An example may have none: summed over
        # the others' segments, each of which then ends where the next one with groups begins.
        has_groups = bounds[:-1] < bounds[1:]
        out[n - 1][has_groups] += np.add.reduceat(counts, bounds[:-1][has_groups], axis=0)
