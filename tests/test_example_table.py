"""A suite's examples held as columns (rows built when read) give what rows gave.

The runner keeps a scored suite's examples as an ExampleColumns over the golden records,
the outputs and the gate's score columns. Everything read from it (rows, result.json,
examples.jsonl.gz, the column accessors reports rank by) must equal what a list of rows
gives, byte for byte, with slice and batch boundaries falling at awkward places.
"""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldgate.history.recording import run_record
from goldgate.history.store import RunRecord, _json_list
from goldgate.io.git import work_tree
from goldgate.model import example_table as example_table_module
from goldgate.model import examples_file as examples_file_module
from goldgate.model.config_loading import load_config
from goldgate.model.example_table import (
    ExampleColumns,
    ExampleResult,
    ExampleRows,
    ExampleTable,
    example_table,
)
from goldgate.model.golden_records import GoldenRecord
from goldgate.model.result import RunResult
from goldgate.runner import bless, run
from tests.test_bounded_memory import _project


def _as_rows(result: RunResult) -> RunResult:
    """The same result with every suite's examples a plain list of rows (as before tables)."""
    suites = [s.model_copy(update={"examples": list(s.examples)}) for s in result.suites]
    return result.model_copy(update={"suites": suites})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    root = tmp_path_factory.mktemp("table")
    ids = [f"q{i:04d}" for i in range(61)]
    _project(root, ids, seed=3, changed=0.0)
    bless(load_config(root / "goldgate.yaml"))
    # today: outputs changed, examples removed and added (new ones have no baseline)
    goldens = [json.loads(line) for line in (root / "goldens.jsonl").read_text().splitlines()]
    preds = [json.loads(line) for line in (root / "preds.jsonl").read_text().splitlines()]
    gone = {"q0003", "q0030"}
    for number, pred in enumerate(preds):
        if number % 3 == 0:
            pred["output"] = (
                "something else entirely" if number % 2 else goldens[number]["references"][0]
            )
    added = [
        {
            "id": example_id,
            "input": {"q": "ünïcode ✓", "n": [1, None]},
            "references": ["a b"],
            "tags": ["x"],
        }
        for example_id in ("q0900", "q0901", "é ✓")
    ]
    goldens = [g for g in goldens if g["id"] not in gone] + added
    preds = [p for p in preds if p["id"] not in gone] + [
        {"id": a["id"], "output": "a b"} for a in added
    ]
    for name, rows in (("goldens.jsonl", goldens), ("preds.jsonl", preds)):
        (root / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    config = load_config(root / "goldgate.yaml")
    return root, run(config, history_source=None, write_reports=False)


@pytest.fixture
def gated(project: tuple[Path, RunResult]) -> RunResult:
    return project[1]


def test_the_runner_keeps_columns_and_builds_rows_alike(gated: RunResult) -> None:
    table = gated.suites[0].examples
    assert isinstance(table, ExampleColumns)
    rows = list(table)
    assert len(table) == len(rows) == 62
    assert table == rows and rows == table
    assert [table[i] for i in range(len(table))] == rows
    assert table[-1] == rows[-1] and table[3:9] == rows[3:9]
    with pytest.raises(IndexError):
        table[len(table)]
    assert list(table.ids) == [row.id for row in rows]
    assert rows[-1].new and not rows[0].new
    assert any(row.flipped_to_wrong for row in rows) and any(row.baseline_output for row in rows)


@pytest.mark.parametrize(("slice_rows", "batch_rows"), [(1, 1), (7, 5), (61, 2), (1024, 1024)])
def test_result_json_and_the_examples_file_are_the_bytes_rows_gave(
    gated: RunResult, slice_rows: int, batch_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(example_table_module, "_ROWS_PER_SLICE", slice_rows)
    monkeypatch.setattr(examples_file_module, "_ROWS_PER_BATCH", batch_rows)
    listed = _as_rows(gated)
    assert gated.to_files() == listed.to_files()
    assert gated.to_json() == listed.to_json()
    assert gated.model_dump() == listed.model_dump()
    assert gated.model_dump(mode="json") == listed.model_dump(mode="json")  # the pytest face
    # each row of the side file is the row model's own JSON
    lines = gzip.decompress(gated.to_files()[1]).decode("utf-8").splitlines()
    for line, row in zip(lines, listed.suites[0].examples, strict=True):
        assert line == '{"suite":"qa",' + row.model_dump_json(exclude_defaults=True)[1:]


def test_a_result_with_columns_is_read_back_as_rows(gated: RunResult, tmp_path: Path) -> None:
    text, side = gated.to_files()
    (tmp_path / "result.json").write_text(text)
    (tmp_path / examples_file_module.EXAMPLES_FILE).write_bytes(side)
    back = RunResult.from_json_file(tmp_path / "result.json")
    assert back.suites[0].examples == list(gated.suites[0].examples)
    # inline as well: the JSON of a result holding columns validates as a list of rows
    inline = RunResult.model_validate_json(gated.to_json())
    assert inline.suites[0].examples == gated.suites[0].examples


def _same(left: np.ndarray, right: np.ndarray) -> bool:
    return bool(np.array_equal(left, right, equal_nan=True))


def test_the_columns_answer_as_the_rows_do(gated: RunResult) -> None:
    table = gated.suites[0].examples
    assert isinstance(table, ExampleTable)
    rows = ExampleRows(list(table))
    assert table.score_names() == rows.score_names() == [m.metric for m in gated.suites[0].metrics]
    for name in [*table.score_names(), "absent"]:
        assert _same(table.current(name), rows.current(name))
        assert _same(table.baseline(name), rows.baseline(name))
    assert np.isnan(table.baseline("bleu")).sum() == 3  # the three new examples
    assert isinstance(table, ExampleColumns) and table._paired() is not None  # read as arrays
    for to_wrong in (True, False):
        assert table.flipped(to_wrong=to_wrong) == rows.flipped(to_wrong=to_wrong)
    assert table.flipped(to_wrong=True)
    assert table.n_new() == rows.n_new() == 3
    assert [list(table.tags_at(i)) for i in range(len(table))] == [r.tags for r in rows]


def test_a_list_of_rows_is_a_table_too() -> None:
    rows = [
        ExampleResult(id="a", references=["r"], output="o", scores={"m": 50.0}),
        ExampleResult(
            id="b", references=["r"], output="o", scores={"m": 0.0}, baseline_scores={"m": 100.0}
        ),
    ]
    table = example_table(rows)
    assert list(table) == rows and example_table(table) is table
    assert _same(table.baseline("m"), np.array([math.nan, 100.0]))
    assert [json.loads(line) for line in table.json_rows()] == [
        r.model_dump(exclude_defaults=True) for r in rows
    ]


def test_the_history_keeps_of_columns_what_it_kept_of_rows(project: tuple[Path, RunResult]) -> None:
    root, gated = project
    config = load_config(root / "goldgate.yaml")
    tree = work_tree(root)
    record = run_record(gated, config, tree=tree)
    assert _stored(record) == _stored(run_record(_as_rows(gated), config, tree=tree))
    suite = record.suites[0]
    assert len(suite.ids) == len(suite.digests) == 62 and suite.ids[-1] == "é ✓"
    # (the failure-mode counts the diagnosis adds are a number a run, not a column)
    scores = [m for m in record.metrics if not m.metric.startswith("category:")]
    assert scores and all(len(m.examples) == 62 for m in scores)


def _stored(record: RunRecord) -> list[object]:
    """A record with its sequences as the store writes them (JSON lists), to compare."""
    return [
        replace(record, suites=(), metrics=()),
        [(s.suite, s.verdict, _json_list(s.ids), _json_list(s.digests)) for s in record.suites],
        [(replace(m, examples=()), _json_list(m.examples)) for m in record.metrics],
    ]


def test_every_optional_field_of_a_row_is_filled_at_its_default() -> None:
    optional = {n: f for n, f in ExampleResult.model_fields.items() if not f.is_required()}
    filled = example_table_module._filled({})
    assert filled == {n: f.get_default(call_default_factory=True) for n, f in optional.items()}
    assert example_table_module._filled({})["tags"] is not filled["tags"]  # fresh, never shared


class _Paired(Mapping[str, float]):
    """The gate's paired scores as the table reads them: one shared table of positions."""

    def __init__(self, position: dict[str, int], values: np.ndarray) -> None:
        self.position, self.values_array = position, values

    def __getitem__(self, key: str) -> float:
        return float(self.values_array[self.position[key]])

    def __iter__(self) -> Iterator[str]:
        return iter(self.position)

    def __len__(self) -> int:
        return len(self.position)


@pytest.mark.parametrize("slice_rows", [1, 3, 1024])
def test_paired_arrays_give_the_rows_mappings_give(
    slice_rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(example_table_module, "_ROWS_PER_SLICE", slice_rows)
    records = [
        GoldenRecord(id=f"e{i}", input=None if i % 4 else {"q": i}, references=("r",), line=i)
        for i in range(10)
    ]
    position = {"e7": 0, "e1": 1, "e2": 2, "e9": 3}
    arrays = {"m": np.array([1.0, 2.5, 1 / 3, 100.0]), "n": np.array([0.0, 50.0, 7.25, 1e-9])}
    common: dict[str, Any] = {
        "scores": {"m": np.linspace(0, 100, 10), "n": [float(i) for i in range(10)]},
        "baseline_outputs": lambda i: ["old"] if i in position else None,
        "flipped_to_wrong": {"n": ["e2"]},
        "flipped_to_right": {"m": ["e9", "e1"], "n": ["e9"]},
        "notes": {"m": [None, "why", *([""] * 8)]},
    }
    outputs = {r.id: [f"out {r.id}"] for r in records}
    plain = ExampleColumns(
        records,
        outputs,
        baseline_scores={
            s: {i: float(a[p]) for i, p in position.items()} for s, a in arrays.items()
        },
        **common,
    )
    fast = ExampleColumns(
        records,
        outputs,
        baseline_scores={s: _Paired(position, a) for s, a in arrays.items()},
        **common,
    )
    at = [position.get(r.id, -1) for r in records]
    given = ExampleColumns(
        records,
        outputs,
        baseline_scores={s: _Paired(position, a) for s, a in arrays.items()},
        paired_at=np.array(at),
        **common,
    )
    rows = list(plain)
    assert rows[9].flipped_to_right == ["m", "n"] and rows[1].notes == {"m": "why"}
    for table in (fast, given):
        assert list(table) == rows and table[9] == rows[9]
        assert list(table.json_rows()) == [
            r.model_dump_json(exclude_defaults=True).encode() for r in rows
        ]
        for name in ("m", "n"):
            assert _same(table.baseline(name), plain.baseline(name))
