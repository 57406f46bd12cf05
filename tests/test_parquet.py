"""Parquet golden sets and predictions: the same records, hash and scores as JSONL."""

from __future__ import annotations

import builtins
import datetime
import decimal
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main
from goldgate.errors import GoldenSetError, InputError
from goldgate.io import parquet
from goldgate.model.goldens import load_goldens
from goldgate.systems.predictions import read_predictions

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

RECORDS: list[dict[str, Any]] = [
    {"id": "a", "input": "q one", "references": ["x y", "y"], "tags": ["t1"]},
    {"id": "b", "input": "q two", "reference": "only one", "meta": {"source": "s"}},
    {"id": "c", "input": "q ünï", "references": ["z"], "tags": ["t1", "t2"]},
]


def _parquet(path: Path, rows: list[dict[str, Any]], row_group_size: int = 2) -> Path:
    # every key of any row becomes a column (null where a row lacks it)
    keys = list(dict.fromkeys(key for row in rows for key in row))
    table = pa.table({key: [row.get(key) for row in rows] for key in keys})
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def test_parquet_goldens_equal_jsonl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jsonl = tmp_path / "g.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    monkeypatch.setattr(parquet, "BATCH_ROWS", 2)  # several batches
    from_parquet = load_goldens(_parquet(tmp_path / "g.parquet", RECORDS), "s")
    from_jsonl = load_goldens(jsonl, "s")
    assert from_parquet.content_hash == from_jsonl.content_hash
    assert [r.references for r in from_parquet.records] == [
        r.references for r in from_jsonl.records
    ]
    assert [r.line for r in from_parquet.records] == [1, 2, 3]


def test_parquet_predictions(tmp_path: Path) -> None:
    golden = load_goldens(_parquet(tmp_path / "g.parquet", RECORDS), "s")
    rows = [{"id": "c", "output": "z"}, {"id": "a", "output": "x y"}, {"id": "b", "output": ""}]
    outputs = read_predictions(_parquet(tmp_path / "p.parquet", rows), golden)
    assert outputs == {"a": ["x y"], "b": [""], "c": ["z"]}
    sampled = [{"id": r["id"], "outputs": ["1", "2"]} for r in RECORDS]
    outputs = read_predictions(_parquet(tmp_path / "s.parquet", sampled), golden, samples=2)
    assert outputs["b"] == ["1", "2"]


def test_bad_parquet_rows_name_file_and_row(tmp_path: Path) -> None:
    rows = [*RECORDS, {"id": "a", "input": "again", "references": ["r"]}]
    with pytest.raises(GoldenSetError, match=r"g\.parquet:4: duplicate id 'a'"):
        load_goldens(_parquet(tmp_path / "g.parquet", rows), "s")
    golden = load_goldens(_parquet(tmp_path / "ok.parquet", RECORDS), "s")
    bad = [{"id": "a", "output": None}, {"id": "b", "output": "x"}]
    with pytest.raises(InputError, match=r"p\.parquet:1: id 'a': no 'output'"):
        read_predictions(_parquet(tmp_path / "p.parquet", bad), golden)
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(GoldenSetError, match="not a readable Parquet file"):
        load_goldens(junk, "s")


def _failing_pyarrow_import(monkeypatch: pytest.MonkeyPatch, failure: ImportError) -> None:
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pyarrow"):
            raise failure
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)


def test_without_pyarrow_the_error_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _parquet(tmp_path / "g.parquet", RECORDS)
    _failing_pyarrow_import(monkeypatch, ModuleNotFoundError("no pyarrow", name="pyarrow"))
    with pytest.raises(GoldenSetError, match=r"goldgate\[parquet\]"):
        load_goldens(path, "s")


# -- bounded: what a file decodes to, not only its size --------------------------------------

#: the cap these tests read under: the bombs decode to 64 MiB, 16 times more
CAP = 4 << 20


def _bomb(path: Path, column: str, rows: int = 1024, text_bytes: int = 64 << 10) -> Path:
    """A file of a few KB whose ``column`` repeats one long text on every row (a dictionary
    page and a run of zero indices): ``rows * text_bytes`` once decoded."""
    text = pa.array(["x" * text_bytes]).dictionary_encode().dictionary
    repeated = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), text)
    values: dict[str, Any] = {
        "id": [str(i) for i in range(rows)],
        "input": ["q"] * rows,
        "reference": ["r"] * rows,
    }
    if column == "references":
        offsets = pa.array(list(range(rows + 1)), pa.int32())
        values["references"] = pa.ListArray.from_arrays(offsets, repeated)
        del values["reference"]
    elif column == "meta":
        values["meta"] = pa.StructArray.from_arrays([repeated], names=["note"])
    else:
        values[column] = repeated
    # No Arrow schema in the file: its writer need not be pyarrow, nor say "dictionary".
    pq.write_table(pa.table(values), path, compression="zstd", store_schema=False)
    return path


@pytest.mark.parametrize("column", ["input", "references", "meta"])
def test_a_dictionary_bomb_is_refused_before_it_is_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column: str
) -> None:
    path = _bomb(tmp_path / "g.parquet", column)
    assert path.stat().st_size < 100_000
    monkeypatch.setattr(parquet, "MAX_INPUT_BYTES", CAP)
    decoded: list[int] = []
    real = parquet._decoded_bytes

    def counted(array: Any) -> int:
        size = real(array)
        decoded.append(size)
        return size

    monkeypatch.setattr(parquet, "_decoded_bytes", counted)
    with pytest.raises(
        GoldenSetError,
        match=rf"g\.parquet: the Parquet golden set decodes to more than {CAP:,} bytes",
    ):
        load_goldens(path, "s")
    if column == "meta":  # inside a struct: measured after decoding, in batches kept small
        assert max(decoded) <= parquet.BATCH_BYTES + (64 << 10)


def test_pages_that_inflate_past_the_cap_are_refused_from_the_footer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = pa.table({"id": ["a"], "input": ["0" * (8 << 20)], "reference": ["r"]})
    path = tmp_path / "g.parquet"
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < 100_000  # zeros compress
    monkeypatch.setattr(parquet, "MAX_INPUT_BYTES", CAP)
    monkeypatch.setattr(parquet, "_decoded_bytes", lambda array: pytest.fail("decoded"))
    with pytest.raises(
        GoldenSetError,
        match=r"g\.parquet: the Parquet golden set holds [\d,]+ bytes once uncompressed",
    ):
        load_goldens(path, "s")


def test_only_the_columns_a_predictions_file_needs_are_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = load_goldens(_parquet(tmp_path / "g.parquet", RECORDS), "s")
    rows = [{"id": r["id"], "output": "x", "latency": decimal.Decimal("1.5")} for r in RECORDS]
    path = _parquet(tmp_path / "p.parquet", rows)
    assert read_predictions(path, golden) == {"a": ["x"], "b": ["x"], "c": ["x"]}


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "directory"])
def test_a_parquet_path_that_is_not_a_regular_file_is_refused(tmp_path: Path, target: str) -> None:
    path = tmp_path / "g.parquet"
    if target == "fifo":
        os.mkfifo(path)  # opening it for reading would wait for a writer
        kind = "a FIFO"
    elif target == "directory":
        path.mkdir()
        kind = "a directory"
    else:
        path.symlink_to(target)
        kind = "a character device"
    with pytest.raises(GoldenSetError, match=rf"g\.parquet: golden set is {kind}"):
        load_goldens(path, "s")


# -- types JSON has no value for ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "shown"),
    [
        (pa.array([b"q one", b"q two"], pa.binary()), "binary"),
        (pa.array([decimal.Decimal("1.5")] * 2, pa.decimal128(5, 2)), r"decimal128\(5, 2\)"),
        (pa.array([datetime.date(2024, 1, 1)] * 2), r"date32\[day\]"),
        (pa.array([datetime.datetime(2024, 1, 1)] * 2), r"timestamp\[us\]"),
    ],
)
def test_an_input_column_of_a_type_json_lacks_exits_2_naming_file_and_column(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    values: Any,
    shown: str,
) -> None:
    table = pa.table({"id": ["a", "b"], "input": values, "reference": ["r", "r"]})
    pq.write_table(table, tmp_path / "g.parquet")
    (tmp_path / "p.jsonl").write_text('{"id":"a","output":"r"}\n{"id":"b","output":"r"}\n')
    (tmp_path / "goldgate.yaml").write_text(
        "version: 1\nsystem: {predictions: p.jsonl}\n"
        "suites:\n  s:\n    goldens: g.parquet\n    metrics: {exact_match: {}}\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"g\.parquet: column 'input' holds {shown} values", err), err
    assert "string (UTF-8) columns" in err


def test_a_nested_field_of_such_a_type_is_named(tmp_path: Path) -> None:
    meta = pa.array([{"cost": decimal.Decimal("1.5")}], pa.struct([("cost", pa.decimal128(5, 2))]))
    table = pa.table({"id": ["a"], "input": ["q"], "reference": ["r"], "meta": meta})
    pq.write_table(table, tmp_path / "g.parquet")
    with pytest.raises(GoldenSetError, match=r"column 'meta\.cost' holds decimal128"):
        load_goldens(tmp_path / "g.parquet", "s")


def test_a_broken_pyarrow_is_shown_with_its_own_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow installed but not importable (built for another NumPy, a library missing):
    its own message, not "install goldgate[parquet]", which is already done."""
    path = _parquet(tmp_path / "g.parquet", RECORDS)
    broken = ImportError("libarrow.so.1900: cannot open shared object file\n(and more)")
    _failing_pyarrow_import(monkeypatch, broken)
    with pytest.raises(GoldenSetError) as info:
        load_goldens(path, "s")
    message = str(info.value)
    assert "installed but does not import: ImportError: libarrow.so.1900: cannot open" in message
    assert "\n" not in message and "pip install" not in message
    _failing_pyarrow_import(monkeypatch, ModuleNotFoundError("no numpy.core", name="numpy.core"))
    with pytest.raises(GoldenSetError, match="does not import: ModuleNotFoundError: no numpy"):
        load_goldens(path, "s")
