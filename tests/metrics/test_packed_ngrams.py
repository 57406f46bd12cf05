"""Packed n-gram keys count and match exactly like dicts of n-grams."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.metrics.ngram.packed_ngrams import (
    CHARACTER_IDS,
    TOKEN_IDS,
    Vocabulary,
    bits_per_item,
    character_ids,
    clipped_matches,
    pack,
    token_ids,
)

ids_lists = st.lists(st.integers(1, 7), max_size=40)


def ngram_counter(ids: list[int], max_order: int) -> Counter[tuple[int, ...]]:
    return Counter(
        tuple(ids[i : i + n]) for n in range(1, max_order + 1) for i in range(len(ids) - n + 1)
    )


@settings(max_examples=200, deadline=None)
@given(ids=ids_lists, max_order=st.integers(1, 9))
def test_pack_counts_every_ngram_once_per_occurrence(ids: list[int], max_order: int) -> None:
    packed = pack(np.array(ids, dtype=np.int64), max_order)
    expected = ngram_counter(ids, max_order)
    assert sorted(packed.counts.tolist()) == sorted(expected.values())
    assert packed.keys.tolist() == sorted(set(packed.keys.tolist()))


@settings(max_examples=200, deadline=None)
@given(hyp=ids_lists, refs=st.lists(ids_lists, min_size=1, max_size=4), max_order=st.integers(1, 6))
def test_clipped_matches_equal_counter_arithmetic(
    hyp: list[int], refs: list[list[int]], max_order: int
) -> None:
    hyp_counts = ngram_counter(hyp, max_order)
    best: Counter[tuple[int, ...]] = Counter()
    for ref in refs:
        best |= ngram_counter(ref, max_order)
    clipped = hyp_counts & best
    expected = [sum(c for g, c in clipped.items() if len(g) == n) for n in range(1, max_order + 1)]
    packed_refs = [pack(np.array(ref, dtype=np.int64), max_order) for ref in refs]
    actual = clipped_matches(pack(np.array(hyp, dtype=np.int64), max_order), packed_refs, max_order)
    assert actual == expected


def test_character_ids_refuse_what_does_not_fit() -> None:
    assert bits_per_item(6) == 10
    assert bits_per_item(63) == 1
    text = "ab"
    ids = character_ids(text, 6)
    assert ids is not None
    assert ids.tolist() == [CHARACTER_IDS[ord("a")], CHARACTER_IDS[ord("b")]]
    # One bit per character leaves room for id 1 only.
    assert character_ids("".join(chr(0x10000 + i) for i in range(3)), 63) is None
    assert character_ids("", 6) is not None


def test_token_ids_refuse_what_does_not_fit() -> None:
    ids = token_ids(["a", "b", "a"], 4)
    assert ids is not None
    assert ids.tolist() == [TOKEN_IDS["a"], TOKEN_IDS["b"], TOKEN_IDS["a"]]
    # One bit per token leaves room for id 1 only, which an earlier token already holds.
    assert token_ids(["a", "b"], 63) is None
    assert token_ids([], 4) is not None


def test_vocabulary_hands_out_stable_ids_from_one() -> None:
    vocabulary = Vocabulary()
    assert [vocabulary[x] for x in "abab"] == [1, 2, 1, 2]
    # str.translate looks characters up by code point and writes the ids as characters.
    assert "aba".translate(vocabulary) == "\x03\x04\x03"
    assert vocabulary[ord("a")] == 3
