"""The history store: recording, concurrency, damage, future versions and migrations."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from goldgate.cli.main import main
from goldgate.history import store as store_module
from goldgate.history.store import (
    MIGRATIONS,
    SCHEMA_VERSION,
    MetricRecord,
    RunRecord,
    SuiteRecord,
    append_safely,
    open_store,
)
from tests.history.project import GitProject


def _record(index: int, *, score: float = 50.0) -> RunRecord:
    return RunRecord(
        created_at=f"2026-11-{1 + index % 28:02d}T00:00:{index % 60:02d}+00:00",
        verdict="pass",
        goldgate_version="0.1.0",
        commit=f"{index:040x}",
        branch="main",
        suites=(SuiteRecord("qa", "pass", ("a", "b"), ("d1", "d2")),),
        metrics=(
            MetricRecord("qa", "exact_match", "sig", score, examples=(100.0, 0.0)),
            MetricRecord("qa", "token_f1", "sig", score + 1),
        ),
    )


def _append_many(path: str, start: int, count: int) -> list[int | None]:
    ids = []
    for index in range(start, start + count):
        run_id, warnings = append_safely(Path(path), _record(index))
        assert not warnings, warnings
        ids.append(run_id)
    return ids


def test_a_record_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "h" / "history.sqlite"
    run_id, warnings = append_safely(path, _record(1, score=74.5))
    assert warnings == [] and run_id == 1
    store, warnings = open_store(path)
    with store:
        rows = store.rows()
        (series,) = store.example_runs("qa", "exact_match", [1])
    assert [(r.suite, r.metric, r.score) for r in rows] == [
        ("qa", "exact_match", 74.5),
        ("qa", "token_f1", 75.5),
    ]
    assert (series.ids, series.digests, series.scores) == (["a", "b"], ["d1", "d2"], [100, 0])
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_last_keeps_the_newest_per_suite_and_metric(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    _append_many(str(path), 0, 12)
    store, _ = open_store(path)
    with store:
        rows = store.rows(last=3, metrics=["exact_match"])
    assert [r.run_id for r in rows] == [10, 11, 12]


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    with ProcessPoolExecutor(2) as pool:
        first = pool.submit(_append_many, str(path), 0, 40)
        second = pool.submit(_append_many, str(path), 100, 40)
        ids = first.result() + second.result()
    assert sorted(i for i in ids if i is not None) == list(range(1, 81))
    store, _ = open_store(path)
    with store:
        assert store.count_runs() == 80
        commits = {r.commit for r in store.rows(metrics=["exact_match"])}
    assert commits == {f"{i:040x}" for i in [*range(40), *range(100, 140)]}


def test_two_concurrent_goldgate_runs_are_both_recorded(tmp_path: Path) -> None:
    GitProject(tmp_path)
    command = [sys.executable, "-m", "goldgate.cli.main", "run", "-q"]
    env = {**os.environ, "GOLDGATE_NO_PROGRESS": "1"}
    processes = [
        subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL)
        for _ in range(2)
    ]
    assert [p.wait(timeout=120) for p in processes] == [0, 0]
    store, warnings = open_store(tmp_path / ".goldgate" / "history.sqlite")
    with store:
        assert store.count_runs() == 2
        assert [r.score for r in store.rows()] == [100.0, 100.0]
    assert warnings == []


@pytest.mark.parametrize("damage", ["garbage", "truncated", "future"])
def test_a_damaged_or_newer_store_is_set_aside_and_the_run_still_gated(
    tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    project = GitProject(tmp_path, gate="{min: 90.0}")
    path = tmp_path / ".goldgate" / "history.sqlite"
    path.parent.mkdir()
    if damage == "garbage":
        path.write_bytes(b"this is not a database\n" * 200)
    else:
        _append_many(str(path), 0, 3)
        if damage == "truncated":
            data = path.read_bytes()
            for companion in ("-wal", "-shm"):
                Path(str(path) + companion).unlink(missing_ok=True)
            path.write_bytes(data[:100] + b"\xff" * 3000)
        else:
            db = sqlite3.connect(path)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
            db.close()
    project.set_right(80)  # below min 90: the gate must still say regressed
    code = main(["run", "-q", "--json"])
    assert code == 1
    result = json.loads(capsys.readouterr().out)
    assert result["verdict"] == "regressed"
    hints = [h for h in result["hints"] if h.startswith("history:")]
    assert len(hints) == 1 and "set aside as history.sqlite." in hints[0], hints
    aside = [p.name for p in path.parent.iterdir() if p.name.startswith("history.sqlite.")]
    label = f"v{SCHEMA_VERSION + 7}" if damage == "future" else "damaged"
    assert any(name.startswith(f"history.sqlite.{label}-") for name in aside), aside
    store, warnings = open_store(path)
    with store:
        assert warnings == [] and store.count_runs() == 1
        assert store.rows()[0].status == "fail"


def test_an_unwritable_history_is_a_hint_and_the_run_still_gated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    GitProject(tmp_path, extra="history: {path: out.txt/history.sqlite}\n")
    (tmp_path / "out.txt").write_text("a file where a folder should be")
    assert main(["run", "-q", "--json"]) == 0
    hints = json.loads(capsys.readouterr().out)["hints"]
    assert any(h.startswith("history: run not recorded: ") for h in hints), hints


def test_history_off_records_nothing(tmp_path: Path) -> None:
    GitProject(tmp_path, extra="history: off\n")
    os.chdir(tmp_path)
    assert main(["run", "-q"]) == 0
    assert not (tmp_path / ".goldgate" / "history.sqlite").exists()


def test_migration_from_the_first_schema(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    db.execute("PRAGMA user_version = 1")
    db.execute(
        "INSERT INTO runs (created_at, commit_sha, branch, dirty, verdict, goldgate_version)"
        " VALUES ('2026-01-01T00:00:00+00:00', 'abc', 'main', 0, 'pass', '0.0.9')"
    )
    db.execute(
        "INSERT INTO scores (run_id, suite, metric, signature, score, low, high, baseline)"
        " VALUES (1, 'qa', 'exact_match', 'sig', 71.5, 70.0, 73.0, 72.0)"
    )
    db.commit()
    db.close()
    store, warnings = open_store(path)
    with store:
        assert warnings == []
        (old,) = store.rows()
        assert (old.commit, old.score, old.low, old.high, old.baseline) == (
            "abc",
            71.5,
            70.0,
            73.0,
            72.0,
        )
        assert (old.source, old.status, old.message) == ("run", None, None)
        store.append(_record(2, score=80.0))
        assert [r.score for r in store.rows(metrics=["exact_match"])] == [71.5, 80.0]
        assert [r.run_id for r in store.example_runs("qa", "exact_match", [1, 2])] == [2]
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_history_config_paths_and_switch(tmp_path: Path) -> None:
    from goldgate.model.config_loading import load_config

    GitProject(tmp_path, git=False)
    assert load_config(tmp_path).history.path == tmp_path / ".goldgate" / "history.sqlite"  # type: ignore[union-attr]
    GitProject(tmp_path, git=False, extra="cache_dir: c\nhistory: {path: h/x.db}\n")
    assert load_config(tmp_path).history.path == tmp_path / "h" / "x.db"  # type: ignore[union-attr]
    GitProject(tmp_path, git=False, extra="history: off\n")
    assert load_config(tmp_path).history is None


@pytest.mark.parametrize(
    "values",
    [
        [],
        ["q1"],
        ["a", "é", '"quoted"', "back\\slash", "\u2028"],
        np.array([0.5, math.nan, math.inf, -math.inf, -0.0, 1e-300, 2 / 3, 100.0]),
        np.array([], dtype=np.float64),
        [f"{i:016x}" for i in range(10)],
    ],
)
def test_lists_are_stored_as_the_json_of_the_whole_list(
    values: list[str] | npt.NDArray[np.float64], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A million examples' ids, digests and scores are turned into JSON a batch at a time:
    the text is ``json.dumps`` of the whole list, whatever the batches."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)
    whole = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    for batch in (1, 3, 4, 1000):
        monkeypatch.setattr(store_module, "_JSON_BATCH", batch)
        assert store_module._json_list(values) == whole


def test_a_history_being_created_by_another_writer_is_waited_for(tmp_path: Path) -> None:
    """Switching a new file to WAL while another connection writes is refused at once (no
    busy timeout: it could deadlock), as when two runs create the history together; the
    switch is tried again until the writer is done, and the run is recorded."""
    path = tmp_path / "history.sqlite"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    done = threading.Timer(0.3, lambda: writer.execute("COMMIT"))
    done.start()
    try:
        run_id, warnings = append_safely(path, _record(1))
    finally:
        done.join()
        writer.close()
    assert warnings == [] and run_id == 1
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
