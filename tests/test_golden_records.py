"""Packed golden records are the records that went in: every way of reading them (a record
by index, a slice, iteration, the columns) gives what the tuple of those records gives, with
blocks small enough that records and slices straddle them."""

from __future__ import annotations

import pickle
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldgate.model import golden_records
from goldgate.model.golden_records import (
    NO_META,
    GoldenRecord,
    PackedRecords,
    pack_records,
    record_ids,
    record_lines,
    record_references,
    record_tags,
    reference_counts,
)
from goldgate.model.goldens import GoldenSet, load_goldens

#: text with characters of every width (Latin-1, the BMP, astral) and none
_TEXT = st.text(alphabet=st.sampled_from('ab é\u00ff\u4e2d\U0001f600\n"\\'), max_size=6)
_INPUT = st.one_of(
    _TEXT,
    st.none(),
    st.integers(),
    st.lists(st.dictionaries(st.sampled_from("rc"), _TEXT), max_size=2),
)
_META = st.one_of(st.just(NO_META), st.dictionaries(st.sampled_from("xy"), st.integers()))


@st.composite
def _records(draw: st.DrawFn) -> list[GoldenRecord]:
    count = draw(st.integers(0, 23))
    return [
        GoldenRecord(
            id=f"r{index}",
            input=draw(_INPUT),
            references=tuple(draw(st.lists(_TEXT, min_size=1, max_size=3))),
            tags=tuple(draw(st.lists(st.sampled_from(["a", "b"]), max_size=2, unique=True))),
            meta=draw(_META),
            line=draw(st.integers(0, 2**40)),
        )
        for index in range(count)
    ]


@pytest.fixture(params=[1, 2, 5, 4096], ids=lambda block: f"block{block}")
def block(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    size: int = request.param
    monkeypatch.setattr(golden_records, "_BLOCK", size)
    return size


# the block size is the same for every example: the fixture need not be reset between them
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(records=_records(), data=st.data())
def test_packed_records_read_back_as_the_records_that_went_in(
    block: int, records: list[GoldenRecord], data: st.DataObject
) -> None:
    expected = tuple(records)
    packed = pack_records(records)
    assert isinstance(packed, PackedRecords)
    assert list(packed) == list(expected)
    assert len(packed) == len(expected)
    assert packed == expected and expected == packed
    for index in range(-len(expected), len(expected)):
        assert packed[index] == expected[index]
        assert type(packed[index]) is GoldenRecord
    start = data.draw(st.integers(0, len(expected) + 2))
    stop = data.draw(st.integers(0, len(expected) + 2))
    step = data.draw(st.sampled_from([None, 1, 2, -1]))
    assert packed[start:stop:step] == expected[start:stop:step]
    assert record_references(packed, start, stop) == [
        list(record.references) for record in expected[start:stop]
    ]
    assert record_ids(packed) == [record.id for record in expected]
    assert record_tags(packed) == [record.tags for record in expected]
    assert record_lines(packed) == [record.line for record in expected]
    assert reference_counts(packed) == [len(record.references) for record in expected]
    assert pickle.loads(pickle.dumps(packed)) == expected


def test_a_record_out_of_range_is_an_index_error() -> None:
    packed = pack_records([GoldenRecord("a", "x", ("y",))])
    with pytest.raises(IndexError):
        packed[1]
    with pytest.raises(IndexError):
        packed[-2]


def test_text_of_another_type_than_str_is_kept_as_it_is() -> None:
    class Text(str):
        pass

    # an input is kept aside as it is; a reference would be cut out of the block's text
    aside = pack_records([GoldenRecord("a", Text("x"), ("y",))])
    assert isinstance(aside, PackedRecords) and type(aside[0].input) is Text
    record = GoldenRecord("b", "x", (Text("y"),))
    kept = pack_records([record])
    assert type(kept) is tuple and kept == (record,)
    assert type(kept[0].references[0]) is Text


def test_a_block_that_cannot_be_packed_keeps_the_blocks_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Text(str):
        pass

    monkeypatch.setattr(golden_records, "_BLOCK", 2)
    records = [GoldenRecord(f"r{i}", "x", (f"y{i}",), line=i) for i in range(5)]
    records[3] = GoldenRecord("r3", "x", (Text("y3"),), line=3)
    kept = pack_records(records)
    assert type(kept) is tuple and kept == tuple(records)


def test_meta_and_inputs_other_than_text_are_the_very_objects() -> None:
    meta = MappingProxyType({"source": "wiki"})
    chat = [{"role": "user", "content": "hi"}]
    packed = pack_records(
        [GoldenRecord("a", chat, ("y",), meta=meta), GoldenRecord("b", "x", ("y",))]
    )
    assert packed[0].input is chat and packed[0].meta is meta
    assert packed[1].meta is NO_META


def test_a_loaded_golden_set_is_packed_and_equal_to_its_records(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(
        '{"id": "q1", "input": "Capital of France?", "references": ["Paris", "paris"]}\n'
        '{"id": "q2", "input": {"text": "2+2"}, "references": ["4"], "tags": ["math"],'
        ' "meta": {"k": 1}}\n',
        encoding="utf-8",
    )
    golden = load_goldens(path, "qa")
    assert isinstance(golden.records, PackedRecords)
    expected = (
        GoldenRecord("q1", "Capital of France?", ("Paris", "paris"), line=1),
        GoldenRecord("q2", {"text": "2+2"}, ("4",), ("math",), {"k": 1}, line=2),
    )
    assert golden.records == expected
    assert golden == GoldenSet("qa", path, expected, golden.content_hash)
    assert golden.ids() == ["q1", "q2"]
    assert golden.reference_counts() == [2, 1]
    assert golden.tags() == ["math"]


def test_a_large_golden_set_holds_its_characters_and_a_few_bytes_an_example(
    tmp_path: Path,
) -> None:
    """What a loaded set keeps per record beyond its characters (traced by tracemalloc):
    ~390 bytes as record objects, ~130 packed (the id's str, offsets, line, tags)."""
    import json
    import tracemalloc

    count = 20_000
    path = tmp_path / "qa.jsonl"
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]
    rows = [
        {
            "id": f"q{i:07d}",
            "input": " ".join(words[(i + k) % 8] for k in range(10)) + " ?",
            "references": [" ".join(words[(i * k) % 8] for k in range(3))] * (1 + i % 3),
            "tags": [words[i % 4]],
        }
        for i in range(count)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    characters = sum(len(row["input"]) + sum(map(len, row["references"])) for row in rows)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        golden = load_goldens(path, "qa")
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(golden) == count
    assert (held - characters) / count < 200, f"{(held - characters) / count:.0f} B an example"
