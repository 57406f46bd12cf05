"""length_ratio: candidate over reference length, BLEU's closest reference, summed stats."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
import sacrebleu
from hypothesis import given, settings

from goldgate.errors import MetricError
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.length import LengthRatio
from goldgate.metrics.registry import create_metric, metric_from_spec
from tests.strategies import corpus


def scored(spec: str, rows: Sequence[tuple[str, Sequence[str]]]) -> tuple[float, list[float]]:
    metric = metric_from_spec(spec)
    (result,) = score_corpus([(spec, metric)], [c for c, _ in rows], [r for _, r in rows])
    return result.corpus_score().score, result.per_example()


@pytest.mark.parametrize(
    ("candidate", "references", "ratio"),
    [
        ("a b c", ["x y z"], 100.0),
        ("a b", ["a b c d"], 50.0),
        ("a b c d", ["a b"], 200.0),
        ("a  b\n c", ["x\ty z"], 100.0),  # whitespace split: runs and newlines are one gap
        ("a b c", ["1 2", "1 2 3 4"], 150.0),  # a tie between 2 and 4 goes to the shorter
        ("a b c", ["1", "1 2 3 4"], 75.0),  # closest wins over shorter
        ("", [""], 100.0),
        ("a b", [""], 200.0),  # an empty reference counts as one token
        ("", ["a b"], 0.0),
    ],
)
def test_example_ratio(candidate: str, references: list[str], ratio: float) -> None:
    score, per_example = scored("length_ratio", [(candidate, references)])
    assert per_example == [ratio]
    assert score == ratio


def test_reference_choice() -> None:
    rows = [("a b c", ["1 2", "1 2 3 4 5 6"])]
    assert scored("length_ratio:ref_length=closest", rows)[1] == [150.0]
    assert scored("length_ratio:ref_length=shortest", rows)[1] == [150.0]
    assert scored("length_ratio:ref_length=longest", rows)[1] == [50.0]
    rows = [("a b c d e", ["1 2", "1 2 3 4 5 6"])]
    assert scored("length_ratio:ref_length=closest", rows)[1] == [pytest.approx(500 / 6)]


def test_corpus_is_ratio_of_sums_not_mean_of_ratios() -> None:
    rows = [("a", ["x y"]), ("a b c d e f", ["x y z"])]  # 1/2 and 6/3: 7/5 overall
    score, per_example = scored("length_ratio", rows)
    assert per_example == [50.0, 200.0]
    assert score == pytest.approx(140.0)


def test_char_tokenize() -> None:
    rows = [("我喜欢吃苹果", ["我喜欢 吃香蕉。"])]
    assert scored("length_ratio:tokenize=char", rows)[1] == [pytest.approx(600 / 7)]
    assert scored("length_ratio", rows)[1] == [50.0]


@settings(max_examples=200, deadline=None)
@given(rows=corpus(max_size=8, max_refs=4))
def test_equals_sacrebleu_sys_len_over_ref_len(rows: list[tuple[str, list[str]]]) -> None:
    """With tokenize none sacrebleu counts whitespace tokens and picks BLEU's closest reference."""
    width = max(len(refs) for _, refs in rows)
    # sacrebleu wants reference streams; a missing reference is None (nrefs:var).
    streams = [[refs[i] if i < len(refs) else None for _, refs in rows] for i in range(width)]
    bleu = sacrebleu.corpus_bleu([c for c, _ in rows], streams, tokenize="none")
    metric = metric_from_spec("length_ratio")
    (result,) = score_corpus([("length_ratio", metric)], [c for c, _ in rows], [r for _, r in rows])
    assert result.total() == [bleu.sys_len, bleu.ref_len]
    if bleu.ref_len:
        assert result.corpus_score().score == pytest.approx(100 * bleu.sys_len / bleu.ref_len)


def test_signature_and_components() -> None:
    metric = create_metric("length_ratio")
    assert isinstance(metric, LengthRatio)
    assert str(metric.signature([2])) == "nrefs:2|tok:whitespace|ref:closest|version:0.1.0"
    other = create_metric("length_ratio", {"tokenize": "char", "ref_length": "longest"})
    assert str(other.signature([1, 2])) == "nrefs:var|tok:char|ref:longest|version:0.1.0"
    assert metric.components([7.0, 5.0]) == {"sys_len": 7, "ref_len": 5}
    # The reference choice does not change a text's length: preprocessing is shared.
    shortest = create_metric("length_ratio", {"ref_length": "shortest"})
    assert shortest.preprocess_key() == metric.preprocess_key()
    assert other.preprocess_key() != metric.preprocess_key()


def test_bad_option() -> None:
    with pytest.raises(MetricError, match=re.escape("bad value for option 'ref_length'")):
        create_metric("length_ratio", {"ref_length": "average"})
