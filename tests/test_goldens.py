"""Golden sets in JSONL, YAML and CSV: validation errors name file and line; the content hash."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldgate.errors import GoldenSetError
from goldgate.model.golden_hashing import content_hash
from goldgate.model.golden_records import GoldenRecord
from goldgate.model.goldens import load_goldens

RECORDS: list[dict[str, Any]] = [
    {"id": "qa-1", "input": "Who wrote it?", "references": ["Ann", "Ann Lee"], "tags": ["easy"]},
    {"id": "qa-2", "input": {"question": "When?", "context": "In 1990."}, "reference": "1990"},
    {"id": "qa-3", "input": "Où ?", "references": ["à Paris"], "tags": ["fr", "easy"],
     "meta": {"source": "hand"}},
]  # fmt: skip


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(GoldenSetError) as info:
        load_goldens(path, "qa")
    message = str(info.value)
    assert message.startswith(str(path)), message
    return message


def test_jsonl_records(tmp_path: Path) -> None:
    golden = load_goldens(write_jsonl(tmp_path / "qa.jsonl", RECORDS), "qa")
    assert golden.suite == "qa" and golden.path == tmp_path / "qa.jsonl"
    assert [r.id for r in golden.records] == ["qa-1", "qa-2", "qa-3"]
    first, second, third = golden.records
    assert first == GoldenRecord(
        id="qa-1", input="Who wrote it?", references=("Ann", "Ann Lee"), tags=("easy",), line=1
    )
    assert second.input == {"question": "When?", "context": "In 1990."}
    assert second.references == ("1990",) and second.tags == ()
    assert third.meta == {"source": "hand"} and third.line == 3
    assert golden.tags() == ["easy", "fr"]
    assert golden.by_id()["qa-2"] == second  # records are values, built when read
    assert len(golden) == 3
    assert golden.content_hash.startswith("sha256:") and len(golden.content_hash) == 71


def test_blank_lines_and_bom_are_fine_and_lines_count_from_one(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    body = "\n".join(json.dumps(r) for r in RECORDS[:2])
    path.write_bytes(b"\xef\xbb\xbf\n" + body.replace("\n", "\n\n").encode() + b"\n")
    golden = load_goldens(path, "qa")
    assert [r.line for r in golden.records] == [2, 4]


def test_unicode_line_separator_inside_a_json_string(tmp_path: Path) -> None:
    rows = [{"id": "a", "input": "x\u2028y\x85z", "reference": "r"}]
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps(rows[0], ensure_ascii=False) + "\n", "utf-8")
    assert load_goldens(path, "qa").records[0].input == "x\u2028y\x85z"


def test_same_set_in_yaml_and_csv_has_the_same_hash(tmp_path: Path) -> None:
    jsonl = load_goldens(write_jsonl(tmp_path / "qa.jsonl", RECORDS), "qa")
    yaml_path = tmp_path / "qa.yaml"
    yaml_path.write_text(yaml.safe_dump(RECORDS, allow_unicode=True), "utf-8")
    from_yaml = load_goldens(yaml_path, "qa")
    assert from_yaml.records == jsonl.records[:0] + tuple(
        GoldenRecord(r.id, r.input, r.references, r.tags, r.meta, i + 1)
        for i, r in enumerate(jsonl.records)
    )
    assert from_yaml.content_hash == jsonl.content_hash

    text_rows = [r for r in RECORDS if isinstance(r["input"], str)]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["id", "input", "reference", "reference", "tags", "source"])
    for row in text_rows:
        refs = row.get("references", [row.get("reference")])
        writer.writerow(
            [row["id"], row["input"], refs[0], refs[1] if len(refs) > 1 else "",
             "|".join(row.get("tags", [])), row.get("meta", {}).get("source", "")]
        )  # fmt: skip
    csv_path = tmp_path / "qa.csv"
    csv_path.write_text(buffer.getvalue(), "utf-8")
    from_csv = load_goldens(csv_path, "qa")
    jsonl_subset = load_goldens(write_jsonl(tmp_path / "sub.jsonl", text_rows), "qa")
    assert from_csv.content_hash == jsonl_subset.content_hash
    assert from_csv.records[0].references == ("Ann", "Ann Lee")
    assert from_csv.records[1].tags == ("fr", "easy")
    assert from_csv.records[1].meta == {"source": "hand"}
    assert [r.line for r in from_csv.records] == [2, 3]


def test_yaml_records_key_and_real_lines_in_errors(tmp_path: Path) -> None:
    path = tmp_path / "qa.yml"
    path.write_text(
        "records:\n  - {id: a, input: x, reference: r}\n  - id: b\n    input: y\n"
        "    references: ['']\n",
        "utf-8",
    )
    message = error_of(path)
    assert "qa.yml:3: id 'b': references[0] is an empty reference" in message


def test_csv_numbered_reference_columns_and_multiline_cells(tmp_path: Path) -> None:
    path = tmp_path / "qa.csv"
    path.write_text(
        'id,input,reference_1,reference_2\na,"two\nlines",r1,\nb,y,r2,r3\n', encoding="utf-8"
    )
    golden = load_goldens(path, "qa")
    assert golden.records[0].input == "two\nlines"
    assert golden.records[0].references == ("r1",)
    assert golden.records[1].references == ("r2", "r3")
    assert [r.line for r in golden.records] == [2, 4]


def test_csv_with_windows_line_ends_has_the_same_records_and_hash(tmp_path: Path) -> None:
    # git's core.autocrlf gives Windows checkouts CRLF: inside a quoted cell too. YAML folds
    # its line breaks to "\n" and JSON escapes them, so a CSV set must not change hash either.
    text = 'id,input,reference\na,"two\nlines",r\nb,y,"r\nr2"\n'
    unix, windows = tmp_path / "unix.csv", tmp_path / "windows.csv"
    unix.write_bytes(text.encode())
    windows.write_bytes(text.replace("\n", "\r\n").encode())
    golden = load_goldens(windows, "qa")
    assert golden.records[0].input == "two\nlines"
    assert golden.records[1].references == ("r\nr2",)
    assert golden.content_hash == load_goldens(unix, "qa").content_hash
    assert [r.line for r in golden.records] == [2, 4]


def test_the_hash_ignores_meta_order_and_formatting_but_not_content(tmp_path: Path) -> None:
    base = load_goldens(write_jsonl(tmp_path / "a.jsonl", RECORDS), "qa").content_hash
    shuffled = [dict(reversed(list(r.items()))) for r in reversed(RECORDS)]
    shuffled[0]["meta"] = {"changed": True}
    path = tmp_path / "b.jsonl"
    path.write_text("\n\n".join(json.dumps(r, indent=None) for r in shuffled), "utf-8")
    assert load_goldens(path, "qa").content_hash == base
    for change in (
        {"input": "Who wrote it? "},
        {"references": ["Ann"]},
        {"tags": ["hard"]},
        {"id": "qa-1b"},
    ):
        rows = [dict(RECORDS[0], **change), *RECORDS[1:]]
        other = load_goldens(write_jsonl(tmp_path / "c.jsonl", rows), "qa").content_hash
        assert other != base, change


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (['{"id": "a", "input": "x", "reference": "r"}', '{"id": "b", "input": '],
         "qa.jsonl:2:22: malformed JSON"),
        (['{"id": "a", "input": "x", "reference": "r"}', "[1, 2]"],
         "qa.jsonl:2: a record must be an object, got a list"),
        (['{"input": "x", "reference": "r"}'], "qa.jsonl:1: the record has no 'id'"),
        (['{"id": "", "input": "x", "reference": "r"}'], "qa.jsonl:1: 'id' is empty"),
        (['{"id": ["a"], "input": "x", "reference": "r"}'], "qa.jsonl:1: 'id' must be text"),
        (['{"id": "a", "input": "x", "reference": "r"}',
          '{"id": "b", "input": "y", "reference": "r"}',
          '{"id": "a", "input": "z", "reference": "r"}'],
         "qa.jsonl:3: duplicate id 'a' (first on line 1)"),
        (['{"id": 7, "input": "x", "reference": "r"}',
          '{"id": "7", "input": "x", "reference": "r"}'],
         "qa.jsonl:2: duplicate id '7' (first on line 1)"),
        (['{"id": "a", "input": "x"}'], "qa.jsonl:1: id 'a': no 'references'"),
        (['{"id": "a", "input": "x", "references": []}'],
         "qa.jsonl:1: id 'a': 'references' is empty"),
        (['{"id": "a", "input": "x", "references": ["ok", " "]}'],
         "qa.jsonl:1: id 'a': references[1] is an empty reference"),
        (['{"id": "a", "input": "x", "reference": ""}'],
         "qa.jsonl:1: id 'a': reference is an empty reference"),
        (['{"id": "a", "input": "x", "references": [3]}'],
         "references[0] must be text, got a number"),
        (['{"id": "a", "input": "x", "reference": "r", "references": ["r"]}'], "not both"),
        (['{"id": "a", "reference": "r"}'], "qa.jsonl:1: id 'a': no 'input'"),
        (['{"id": "a", "input": null, "reference": "r"}'], "no 'input'"),
        (['{"id": "a", "input": "x", "refrences": ["r"]}'],
         "unknown field 'refrences' (did you mean 'references'?)"),
        (['{"id": "a", "input": "x", "reference": "r", "tags": [1]}'], "'tags' must be a list"),
        (['{"id": "a", "input": "x", "reference": "r", "meta": 3}'], "'meta' must be an object"),
        ([""], "qa.jsonl: the golden set is empty"),
    ],
)  # fmt: skip
def test_jsonl_errors_name_file_and_line(tmp_path: Path, lines: list[str], expected: str) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    assert expected in error_of(path)


def test_bad_utf8_names_line_column_and_byte(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    good = b'{"id": "a", "input": "x", "reference": "r"}\n'
    path.write_bytes(good + b'{"id": "b", "input": "caf\xe9", "reference": "r"}\n')
    message = error_of(path)
    assert f"qa.jsonl:2:26: not valid UTF-8 (byte offset {len(good) + 25}" in message


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("qa.jsonl", '{"id": "a", "input": "x", "reference": "r"}\n'
                     '{"id": "b", "input": "x", "reference": "caf\\udce9"}\n',
         "qa.jsonl:2: id 'b': holds a lone surrogate '\\udce9'"),
        ("qa.yaml", '- {id: a, input: x, reference: r}\n'
                    '- {id: b, input: "\\ud800", reference: r}\n',
         "qa.yaml:2: id 'b': holds a lone surrogate '\\ud800'"),
    ],
)  # fmt: skip
def test_escaped_lone_surrogates_are_not_text(
    tmp_path: Path, name: str, text: str, expected: str
) -> None:
    # Valid UTF-8 files can still spell one with a JSON or YAML escape; it cannot be hashed,
    # cached or reported, so it is refused here rather than as a traceback later.
    path = tmp_path / name
    path.write_text(text, "utf-8")
    assert expected in error_of(path)
    path.write_text(text.replace("\\udce9", "\\ud83d\\ude00").replace("\\ud800", "\\u00e9"))
    assert len(load_goldens(path, "qa").records) == 2  # a surrogate pair is an emoji: fine


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("- {id: a, input: x, reference: r}\n- {id: a, input: y, reference: r}\n",
         "qa.yaml:2: duplicate id 'a' (first on line 1)"),
        ("- {id: a, input: x, reference: r\n", "qa.yaml:2:1: malformed YAML"),
        ("id: a\n", "a YAML golden set is a list of records"),
        ("- {id: a, input: x, reference: r, id: b}\n", "qa.yaml:1: [0].id: duplicate key"),
        ("- {id: a, input: 2020-01-01, reference: r}\n", None),
    ],
)  # fmt: skip
def test_yaml_errors(tmp_path: Path, text: str, expected: str | None) -> None:
    path = tmp_path / "qa.yaml"
    path.write_text(text, "utf-8")
    if expected is None:  # timestamps stay text, so inputs stay JSON
        assert load_goldens(path, "qa").records[0].input == "2020-01-01"
    else:
        assert expected in error_of(path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id,question,reference\na,x,r\n", "qa.csv:1: the CSV header has no 'input' column"),
        ("id,input,answer\na,x,r\n", "qa.csv:1: the CSV header has no 'reference' column"),
        ("id,input,reference\na,x\n", "qa.csv:2: expected 3 cells as in the header, got 2"),
        ("id,input,reference\na,x,\n", "qa.csv:2: id 'a': 'references' is empty"),
        ("id,input,reference\na,x,r\n,y,r\n", "qa.csv:3: 'id' is empty"),
        ('id,input,reference\na,x,r\nb,"y,r\n', "qa.csv:3: malformed CSV"),
        ("id,id,input,reference\n", "repeats the 'id' column"),
    ],
)  # fmt: skip
def test_csv_errors(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "qa.csv"
    path.write_text(text, "utf-8")
    assert expected in error_of(path)


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    assert "golden set not found" in error_of(tmp_path / "qa.jsonl")
    (tmp_path / "qa.txt").write_text("x", "utf-8")
    assert "unknown golden set format '.txt'" in error_of(tmp_path / "qa.txt")


# YAML reads control characters and line separators as line breaks: keep them out.
_chars = st.characters(exclude_categories=["Cs", "Cc", "Zl", "Zp"])
_texts = st.text(_chars, min_size=1, max_size=12).filter(lambda s: s.strip() == s and s != "")
_inputs = st.recursive(
    st.text(_chars, max_size=10) | st.integers() | st.booleans(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(_chars, max_size=5), inner,
                                                                max_size=3),
    max_leaves=6,
)  # fmt: skip


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(_texts, _inputs, st.lists(_texts, min_size=1, max_size=3),
                  st.lists(_texts, max_size=2)),
        min_size=1, max_size=6, unique_by=lambda row: row[0],
    )
)  # fmt: skip
def test_jsonl_and_yaml_round_trip_with_equal_hashes(
    tmp_path: Path, rows: list[tuple[str, Any, list[str], list[str]]]
) -> None:
    records = [
        {"id": rid, "input": inp, "references": refs, "tags": tags} for rid, inp, refs, tags in rows
    ]
    jsonl = load_goldens(write_jsonl(tmp_path / "h.jsonl", records), "h")
    yaml_path = tmp_path / "h.yaml"
    yaml_path.write_text(yaml.safe_dump(records, allow_unicode=True), "utf-8")
    from_yaml = load_goldens(yaml_path, "h")
    assert [r.input for r in from_yaml.records] == [r["input"] for r in records]
    assert [r.references for r in jsonl.records] == [tuple(r["references"]) for r in records]
    assert from_yaml.content_hash == jsonl.content_hash
    assert content_hash(list(reversed(jsonl.records))) == jsonl.content_hash
