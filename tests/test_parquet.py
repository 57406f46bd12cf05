"""Parquet golden sets and predictions: the same records, hash and scores as JSONL."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from goldgate import parquet
from goldgate.errors import GoldenSetError, InputError
from goldgate.goldens import load_goldens
from goldgate.systems import read_predictions

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
