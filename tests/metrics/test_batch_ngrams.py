"""Batch scoring equals example-by-example scoring bit for bit, and its n-gram matcher is exact."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.metrics.base import Metric
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.ngram import batch_lcs, batch_ngrams
from goldgate.metrics.ngram.chrf import f_score, f_scores
from goldgate.metrics.registry import metric_from_spec
from goldgate.metrics.text_batch import TextBatch
from tests.strategies import adversarial_text, tokenizer_soup

Sequences = list[list[int]]


def _naive(
    texts: Sequences, candidates: list[int], references: list[list[int]], order: int
) -> np.ndarray:
    sides = 1 + max(len(refs) for refs in references)
    out = np.zeros((order, len(candidates), sides), dtype=np.int64)
    for e, (candidate, refs) in enumerate(zip(candidates, references, strict=True)):
        for n in range(1, order + 1):

            def grams(items: list[int], n: int = n) -> Counter[tuple[int, ...]]:
                return Counter(tuple(items[i : i + n]) for i in range(len(items) - n + 1))

            hyp = grams(texts[candidate])
            counted = [grams(texts[r]) for r in refs]
            for j, ref in enumerate(counted, start=1):
                out[n - 1, e, j] = sum(min(c, ref[g]) for g, c in hyp.items())
            out[n - 1, e, 0] = sum(min(c, max(ref[g] for ref in counted)) for g, c in hyp.items())
    return out


@st.composite
def chunks(draw: Any) -> tuple[Sequences, list[int], list[list[int]], int]:
    largest = draw(st.sampled_from([1, 2, 3, 40, 5000, 1 << 23, 1 << 40]))
    item = st.integers(1, largest)
    texts = draw(st.lists(st.lists(item, max_size=12), min_size=1, max_size=12))
    index = st.integers(0, len(texts) - 1)
    n = draw(st.integers(1, 12))
    candidates = draw(st.lists(index, min_size=n, max_size=n))
    references = draw(st.lists(st.lists(index, min_size=1, max_size=4), min_size=n, max_size=n))
    return texts, candidates, references, draw(st.integers(1, 7))


def _layout(texts: Sequences, candidates: list[int], references: list[list[int]]) -> Any:
    items = np.array([i for text in texts for i in text], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts]))).astype(np.int64)
    ref_offsets = np.concatenate(([0], np.cumsum([len(r) for r in references]))).tolist()
    flat = [r for refs in references for r in refs]
    return batch_ngrams.layout(items, offsets, batch_ngrams.pairs(candidates, flat, ref_offsets))


@settings(max_examples=300, deadline=None)
@given(chunk=chunks(), block=st.sampled_from([1, 3, 17, 1 << 20]), clip=st.booleans())
def test_matches_equal_counting_each_example(
    chunk: tuple[Sequences, list[int], list[list[int]], int], block: int, clip: bool
) -> None:
    texts, candidates, references, order = chunk
    expected = _naive(texts, candidates, references, order)
    if not clip:
        expected[:, :, 0] = 0
    old = batch_ngrams.BLOCK_POSITIONS
    batch_ngrams.BLOCK_POSITIONS = block  # blocks end at awkward places
    try:
        got = batch_ngrams.matches(_layout(texts, candidates, references), order, clip=clip)
    finally:
        batch_ngrams.BLOCK_POSITIONS = old
    assert got is not None
    assert got.tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(chunk=chunks(), clip=st.booleans(), same=st.lists(st.booleans(), max_size=40))
def test_pairs_with_the_candidate_as_reference_are_filled_in_exactly(
    chunk: tuple[Sequences, list[int], list[list[int]], int], clip: bool, same: list[bool]
) -> None:
    # Some references replaced by the candidate's own text (all of an example's, some, none).
    texts, candidates, references, order = chunk
    flags = iter(same)
    references = [[c if next(flags, False) else r for r in refs] for c, refs in
                  zip(candidates, references, strict=True)]  # fmt: skip
    items = np.array([i for text in texts for i in text], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts]))).astype(np.int64)
    ref_offsets = np.concatenate(([0], np.cumsum([len(r) for r in references]))).tolist()
    flat = [r for refs in references for r in refs]
    pairs = batch_ngrams.pairs(candidates, flat, ref_offsets)
    got = batch_ngrams.pair_matches(items, offsets, pairs, order, clip=clip)
    expected = batch_ngrams.matches(batch_ngrams.layout(items, offsets, pairs), order, clip=clip)
    assert got is not None and expected is not None
    assert got.tolist() == expected.tolist()


def test_keys_that_cannot_fit_are_refused() -> None:
    # 40 distinct items need 6 bits each; 11 of them do not fit one int64 key.
    texts = [list(range(1, 41)), list(range(40, 0, -1))]
    data = _layout(texts, [0], [[1]])
    assert batch_ngrams.matches(data, 11) is None
    assert batch_ngrams.matches(data, 10) is not None


def test_renumbering_keeps_order_and_equality() -> None:
    for items in ([5, 3, 5, 9, 3], [1 << 40, 7, 1 << 40, 1 << 50]):
        array = np.array(items, dtype=np.int64)
        dense, distinct = batch_ngrams.renumber(array)
        assert distinct == len(set(items))
        assert sorted(set(dense.tolist())) == list(range(1, distinct + 1))
        assert np.array_equal(np.argsort(array, kind="stable"), np.argsort(dense, kind="stable"))


# --- metrics: the batch path against the example-by-example path -------------------------------

BATCH_SPECS = [
    "bleu",
    "bleu:lowercase=true,tokenize=intl",
    "bleu:tokenize=char,max_ngram_order=6",
    "bleu:tokenize=zh",
    "bleu:tokenize=none,smooth_method=add-k",
    "sentence_bleu",
    "sentence_bleu:smooth_method=floor,effective_order=false",
    "chrf",
    "chrf++",
    "chrf:whitespace=true,lowercase=true",
    "chrf:char_order=3,word_order=3,beta=1",
    "chrf:char_order=0,word_order=2",
    "chrf:eps_smoothing=true",
    "rouge1",
    "rouge2",
    "rouge3:use_stemmer=true",
    "rouge2:tokenizer=unicode",
    "rougeL",
    "rougeL:use_stemmer=true",
    "rougeL:tokenizer=unicode",
    "exact_match",
    "exact_match:normalizer=lower+nfkc+strip_punct",
    "exact_match:normalizer=strict",
    "exact_match:normalizer=lower",
    "exact_match:normalizer=white_space_fix+remove_articles",
    "token_f1",
    "token_f1:normalizer=strict",
    "token_f1:normalizer=casefold+strip_unicode_punct",
]

# Text meant to break tokenizers and counters: punctuation and digits next to each other,
# every kind of whitespace, repeated characters, accents, CJK, a lone surrogate.
_PIECES = [
    "a", "aa", "b", "the", "The", "cat", ".", ",", "-", "1", "2.5", "3,000", "'s", "&amp;",
    "&quot;", "<skipped>", "(", ")", "!", "?", " ", "  ", "\n", "\t", "\r", "\u2028", "\x85",
    "\u3000", "é", "É", "ß", "東京", "の", "\ud800", "„", "“", "-\n", "x" * 30, "ΑΣ", "İ",
    "the cat " * 40,
]  # fmt: skip
texts = st.lists(st.sampled_from(_PIECES), max_size=25).map("".join)


def _rows(
    metric: Metric[Any], candidates: Sequence[str], references: Sequence[Sequence[str]]
) -> Any:
    prepared = {
        text: metric.preprocess(text)
        for text in [*candidates, *(r for refs in references for r in refs)]
    }
    return [
        metric.example_stats(prepared[c], [prepared[r] for r in refs])
        for c, refs in zip(candidates, references, strict=True)
    ]


@pytest.mark.parametrize("spec", BATCH_SPECS)
@settings(max_examples=60, deadline=None)
@given(
    examples=st.lists(
        st.tuples(texts, st.lists(texts, min_size=1, max_size=3)), min_size=1, max_size=8
    )
)
def test_batch_rows_equal_example_rows(spec: str, examples: list[tuple[str, list[str]]]) -> None:
    metric = metric_from_spec(spec)
    candidates = [c for c, _ in examples]
    references = [refs for _, refs in examples]
    got = metric.batch_stats(TextBatch(candidates, references))
    assert got is not None
    expected = np.asarray(_rows(metric, candidates, references), dtype=np.float64)
    assert np.asarray(got, dtype=np.float64).tobytes() == expected.tobytes()


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.integers(0, 60), min_size=3, max_size=3).map(
            lambda t: [t[0], t[1], min(t[2], t[0], t[1])]
        ),
        min_size=1,
        max_size=8,
    ).map(lambda orders: [value for triple in orders for value in triple]),
    beta=st.integers(0, 5),
    eps=st.booleans(),
)
def test_vectorised_f_scores_equal_f_score(rows: list[int], beta: int, eps: bool) -> None:
    matrix = np.array([rows, rows[::-1]], dtype=np.float64)
    got = f_scores(matrix, beta, eps).tolist()
    assert got == [f_score(row, beta, eps) for row in matrix.tolist()]


def test_a_batch_whose_keys_cannot_fit_is_scored_example_by_example() -> None:
    # 20-grams of 26 distinct tokens need 20 × 5 bits: no int64 key holds them.
    metric = metric_from_spec("bleu:max_ngram_order=20,tokenize=char")
    candidates = ["abcdefghijklmnopqrstuvwxyz", "the cat"]
    references = [["zyxwvutsrqponmlkjihgfedcba abcdefghijklmnopqrstuvwxyz"], ["a cat", "the hat"]]
    assert metric.batch_stats(TextBatch(candidates, references)) is None
    [result] = score_corpus([("bleu", metric)], candidates, references)
    expected = _rows(metric, candidates, references)
    assert [list(row) for row in result.stats] == [list(row) for row in expected]
    assert result.stats[0][2 + 19] == 7  # the alphabet's 7 character 20-grams, all matched


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.integers(1, 4), max_size=80) | st.lists(st.integers(1, 1 << 40), max_size=8),
        min_size=1,
        max_size=8,
    ),
    pairs=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), min_size=1, max_size=12),
    long_side=st.sampled_from([3, 70, 1024]),
)
def test_batched_lcs_equals_lcs_length(
    texts: Sequences, pairs: list[tuple[int, int]], long_side: int
) -> None:
    # Sides of 0, 1..64 and more than 64 tokens, and a long side past LONG_SIDE: batched rows,
    # rows one by one, and both in one call.
    from goldgate.metrics.ngram.lcs import lcs_length, position_masks

    pairs = [(a % len(texts), b % len(texts)) for a, b in pairs]
    items = np.array([i for text in texts for i in text], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(t) for t in texts]))).astype(np.int64)
    left = np.array([a for a, _ in pairs], dtype=np.int64)
    right = np.array([b for _, b in pairs], dtype=np.int64)
    old = batch_lcs.LONG_SIDE
    batch_lcs.LONG_SIDE = long_side
    try:
        got = batch_lcs.lcs_lengths(items, offsets, left, right).tolist()
    finally:
        batch_lcs.LONG_SIDE = old
    expected = [
        lcs_length(position_masks(texts[a]), len(texts[a]), texts[b])  # type: ignore[arg-type]
        for a, b in pairs
    ]
    assert got == expected


_JOINED_SPECS = [
    "bleu",
    "chrf",
    "chrf:lowercase=true,whitespace=true",
    "rouge1",
    "rougeL",
    "exact_match",
    "token_f1",
]


@pytest.mark.parametrize("spec", _JOINED_SPECS)
@settings(max_examples=100, deadline=None)
@given(
    examples=st.lists(
        st.tuples(
            texts | adversarial_text(),
            st.lists(
                texts | adversarial_text() | st.sampled_from(["", "\x00", "a\x00b"]),
                min_size=1,
                max_size=3,
            ),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_texts_tokenised_joined_equal_tokenised_one_by_one(
    spec: str, examples: list[tuple[str, list[str]]]
) -> None:
    # One pass over the chunk's texts joined by a separator gives each text's own tokens
    # (Greek final sigma, dotted I, whitespace runs, entities, a text holding the separator).
    metric = metric_from_spec(spec)
    candidates = [c for c, _ in examples]
    references = [refs for _, refs in examples]
    got = metric.batch_stats(TextBatch(candidates, references))
    expected = np.asarray(_rows(metric, candidates, references), dtype=np.float64)
    assert np.asarray(got, dtype=np.float64).tobytes() == expected.tobytes()


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(adversarial_text() | texts | tokenizer_soup, min_size=1, max_size=6))
def test_joined_tokenizers_equal_their_text_by_text_twins(lines: list[str]) -> None:
    from goldgate.metrics.ngram import batch_tokens
    from goldgate.metrics.ngram.packed_ngrams import TOKEN_IDS
    from goldgate.metrics.ngram.rouge import _JOINED_ASCII_TOKEN
    from goldgate.metrics.text.rouge_tokenize import default_tokens
    from goldgate.metrics.text.sacre_tokenizers import tokenize_13a

    lines = [line.replace("\x00", "") for line in lines]
    for joined_tokens, each, padding in [
        (tokenize_13a, tokenize_13a, " "),
        (lambda text: _JOINED_ASCII_TOKEN.findall(text.lower()), default_tokens, ""),
        (str.split, str.split, " "),
    ]:
        whole = batch_tokens.joined(lines, padding)
        assert whole is not None
        found = batch_tokens.split_items(joined_tokens(whole), len(lines))
        assert found is not None
        items, offsets = found
        expected = [[TOKEN_IDS[t] for t in each(line)] for line in lines]
        got = [items[offsets[i] : offsets[i + 1]].tolist() for i in range(len(lines))]
        assert got == expected
