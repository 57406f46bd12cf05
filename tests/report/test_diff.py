from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.report.diff import DiffOp, new_text, old_text, tokenize, word_diff
from tests.strategies import any_text


def test_word_diff_marks_changed_words() -> None:
    ops = word_diff("the cat sat on the mat", "the dog sat on the mat")
    assert ops == [
        DiffOp("equal", "the"),
        DiffOp("delete", " cat"),
        DiffOp("insert", " dog"),
        DiffOp("equal", " sat on the mat"),
    ]


def test_identical_texts_are_one_equal_run() -> None:
    assert word_diff("a b  c", "a b  c") == [DiffOp("equal", "a b  c")]


def test_whitespace_only_change_keeps_both_spellings() -> None:
    ops = word_diff("a  b", "a b")
    assert [op.kind for op in ops] == ["equal", "equal"]
    assert ops[1] == DiffOp("equal", " b", "  b")


def test_empty_sides() -> None:
    assert word_diff("", "") == []
    assert word_diff("", "new words") == [DiffOp("insert", "new words")]
    assert word_diff("old", "") == [DiffOp("delete", "old")]


def test_tokenize_keeps_every_character() -> None:
    text = "  lead\ttab\nnew line  trail  "
    assert "".join(tokenize(text)) == text


@settings(max_examples=200, deadline=None)
@given(old=any_text, new=any_text)
def test_diff_restores_both_texts(old: str, new: str) -> None:
    ops = word_diff(old, new)
    assert new_text(ops) == new
    assert old_text(ops) == old
    assert all(op.text for op in ops)


@settings(max_examples=100, deadline=None)
@given(words=st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=30))
def test_unchanged_words_are_never_marked(words: list[str]) -> None:
    text = " ".join(words)
    assert all(op.kind == "equal" for op in word_diff(text, text))
