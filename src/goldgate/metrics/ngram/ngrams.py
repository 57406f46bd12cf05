"""N-gram counting for BLEU and chrF: Counters filled in C, clipped matches by set operations.

sacrebleu loops over every hypothesis n-gram in Python; here the common n-grams come from a
C-level key intersection, and when either side holds each n-gram once (the usual case for
longer n-grams) the clipped count is simply how many are common.
"""

from __future__ import annotations

import collections
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from itertools import repeat
from typing import Any

#: n-gram -> count. Plain dicts: nothing here needs Counter's missing-key default.
Counts = dict[Any, int]

# CPython's C counting loop, which Counter(iterable) reaches only after a Python-level __init__
# and an ABC isinstance check; calling it on a plain dict saves both on the tens of thousands
# of small counts a corpus needs. It has been in `collections` since Python 3.2.
_count_elements: Any = getattr(collections, "_count_elements", None)


def count(items: Iterable[Hashable]) -> Counts:
    """``dict(Counter(items))``, faster."""
    if _count_elements is None:  # pragma: no cover - other Python implementations
        return dict(Counter(items))
    counts: Counts = {}
    _count_elements(counts, items)
    return counts


def ngram_counts(items: Sequence[str], max_order: int) -> list[Counts]:
    """Counts of the n-grams of orders 1..max_order of a token list or a string.

    Word n-grams are tuples (zip builds them in C); character n-grams are substrings.
    """
    counters = [count(items)] if max_order >= 1 else []
    size = len(items)
    if isinstance(items, str):
        for n in range(2, max_order + 1):
            counters.append(count([items[i : i + n] for i in range(size - n + 1)]))
    else:
        for n in range(2, max_order + 1):
            counters.append(count(zip(*[items[i:] for i in range(n)], strict=False)))
    return counters


def matches(hyp: Counts, hyp_total: int, ref: Counts, ref_total: int) -> int:
    """Σ over n-grams of min(hypothesis count, reference count); totals are the count sums."""
    common = hyp.keys() & ref.keys()
    if len(hyp) == hyp_total or len(ref) == ref_total:
        # One side holds every n-gram once, so each common n-gram contributes exactly 1.
        return len(common)
    return sum(map(min, map(hyp.__getitem__, common), map(ref.__getitem__, common)))


def clipped_matches(hyp: Counts, hyp_total: int, refs: Sequence[tuple[Counts, int]]) -> int:
    """Σ over n-grams of min(hypothesis count, largest count in any one reference)."""
    if len(refs) == 1:
        return matches(hyp, hyp_total, *refs[0])
    common: set[Any] = set()
    for ref, _ in refs:
        common |= hyp.keys() & ref.keys()
    if len(hyp) == hyp_total or all(len(ref) == total for ref, total in refs):
        return len(common)
    best = map(max, *[map(ref.get, common, repeat(0)) for ref, _ in refs])
    return sum(map(min, map(hyp.__getitem__, common), best))
