"""The bit-parallel LCS against plain dynamic programmes and rouge-score's backtrack."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from goldgate.metrics.ngram.lcs import lcs_indices, lcs_length, position_masks, wlcs_hit_mask

# A small alphabet makes long common subsequences and many tie-breaks likely.
tokens = st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=40)
long_tokens = st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=150, max_size=300)


def dp_lcs_length(a: list[str], b: list[str]) -> int:
    """The textbook O(mn) table."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            current[j] = previous[j - 1] + 1 if x == y else max(previous[j], current[j - 1])
        previous = current
    return previous[-1]


def test_position_masks() -> None:
    assert position_masks(["a", "b", "a"]) == {"a": 0b101, "b": 0b010}
    assert position_masks([]) == {}


def test_lcs_length_small_cases() -> None:
    # "abcbdab" / "bdcaba": the CLRS example, LCS "bcba" of length 4.
    a, b = list("abcbdab"), list("bdcaba")
    assert lcs_length(position_masks(a), len(a), b) == 4
    assert lcs_length(position_masks([]), 0, b) == 0
    assert lcs_length(position_masks(a), len(a), []) == 0


@settings(max_examples=300, deadline=None)
@given(tokens, tokens)
def test_bit_parallel_length_equals_dp(a: list[str], b: list[str]) -> None:
    expected = dp_lcs_length(a, b)
    assert lcs_length(position_masks(a), len(a), b) == expected
    assert lcs_length(position_masks(b), len(b), a) == expected


@settings(max_examples=20, deadline=None)
@given(long_tokens, long_tokens)
def test_bit_parallel_length_equals_dp_on_long_texts(a: list[str], b: list[str]) -> None:
    assert lcs_length(position_masks(a), len(a), b) == dp_lcs_length(a, b)


@settings(max_examples=300, deadline=None)
@given(tokens, tokens)
def test_indices_equal_rouge_score_backtrack(ref: list[str], cand: list[str]) -> None:
    expected = rouge_scorer.lcs_ind(ref, cand)
    assert lcs_indices(ref, cand, position_masks(cand)) == expected


@settings(max_examples=20, deadline=None)
@given(long_tokens, long_tokens)
def test_indices_equal_rouge_score_backtrack_on_long_texts(ref: list[str], cand: list[str]) -> None:
    assert lcs_indices(ref, cand, position_masks(cand)) == rouge_scorer.lcs_ind(ref, cand)


def test_indices_tie_break_moves_up() -> None:
    # ref "a b", cand "b a": both one-token LCSs are valid; rouge-score's backtrack ends on
    # the candidate's last token, "a", which is ref position 0.
    assert rouge_scorer.lcs_ind(["a", "b"], ["b", "a"]) == [0]
    assert lcs_indices(["a", "b"], ["b", "a"], position_masks(["b", "a"])) == [0]
    # ref "c c b", cand "b c a": the walk goes up from "b" and from the second "c" although
    # both rows hold a match further left; the first "c" is read out.
    assert rouge_scorer.lcs_ind(["c", "c", "b"], ["b", "c", "a"]) == [0]
    assert lcs_indices(["c", "c", "b"], ["b", "c", "a"], position_masks(["b", "c", "a"])) == [0]


def marks(model: list[str], peer: list[str], weight: float) -> list[int]:
    """Positions of ``model`` marked by the weighted LCS."""
    weights = [k**weight for k in range(len(peer) + 2)]
    hits = [False] * len(model)
    wlcs_hit_mask(model, peer, weights, hits)
    return [i for i, hit in enumerate(hits) if hit]


@settings(max_examples=300, deadline=None)
@given(tokens, tokens)
def test_wlcs_with_weight_one_is_rouge_score_lcs(model: list[str], peer: list[str]) -> None:
    # With f(k) = k every cell is the LCS table, and the Perl tie-break ("up when
    # c[i-1][j] >= c[i][j-1]") is rouge-score's ("left when t[i][j-1] > t[i-1][j]").
    assert marks(model, peer, 1.0) == rouge_scorer.lcs_ind(model, peer)


def test_wlcs_prefers_consecutive_matches() -> None:
    # model "a a b", peer "a b a": both "a a" and "a b" are LCSs of length 2. Plain LCS
    # (rouge-score) reads out "a a" (model 0, 1), two separate matches worth 1 + 1 = 2 under
    # f(k) = k^1.2; the weighted LCS takes the run "a b" (model 1, 2), worth 2^1.2 ≈ 2.297.
    assert rouge_scorer.lcs_ind(["a", "a", "b"], ["a", "b", "a"]) == [0, 1]
    assert marks(["a", "a", "b"], ["a", "b", "a"], 1.2) == [1, 2]
    # A split match: the run "a b", then "d" ("x" is not in the model).
    assert marks(["a", "b", "c", "d"], ["a", "b", "x", "d"], 1.2) == [0, 1, 3]
    assert marks([], ["a"], 1.2) == []
    assert marks(["a"], [], 1.2) == []
