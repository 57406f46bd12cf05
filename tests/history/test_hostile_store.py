"""A history file that is damaged or planted never costs a verdict, an exit code or a hang.

Each case is read the four ways ``goldgate history`` reads (the table, ``--json``,
``--export-last`` and ``--html``): what goldgate never writes is set aside with a warning,
the rest is shown, and JSON never holds ``NaN`` or ``Infinity``.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main
from goldgate.history import store as store_module
from goldgate.history.store import MetricRecord, RunRecord, SuiteRecord, append_safely, open_store
from tests.history.project import GitProject

#: a query that never ends: counts an endless recursive sequence
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def _record(index: int, *, examples: tuple[float, ...] = (100.0, 0.0)) -> RunRecord:
    """A run of one clean commit and one system, so that its examples can be flaky."""
    return RunRecord(
        created_at=f"2026-11-{1 + index:02d}T00:00:00+00:00",
        verdict="pass",
        goldgate_version="0.1.0",
        commit="c" * 40,
        branch="main",
        system="one-system",
        suites=(SuiteRecord("qa", "pass", ("a", "b"), ("d1", "d2")),),
        metrics=(MetricRecord("qa", "exact_match", "sig", 50.0 + index, examples=examples),),
    )


def _strict(text: str) -> Any:
    """JSON as every parser takes it: ``NaN``, ``Infinity`` and ``-Infinity`` refused."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


def _store(root: Path, runs: int = 3) -> Path:
    path = root / ".goldgate" / "history.sqlite"
    for index in range(runs):
        run_id, warnings = append_safely(path, _record(index))
        assert run_id is not None and warnings == []
    return path


def _four_ways(root: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, tuple[str, str]]:
    """``history``, ``--json``, ``--export-last``, ``--html``: each exits 0; out and err."""
    seen = {}
    for name, argv in {
        "table": ["history"],
        "json": ["history", "--json", "--last", "0"],
        "export": ["history", "--export-last"],
        "html": ["history", "--html", str(root / "page.html")],
    }.items():
        assert main(argv) == 0, name
        seen[name] = capsys.readouterr()
    return seen


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitProject:
    monkeypatch.chdir(tmp_path)
    return GitProject(tmp_path, git=False, gate="{min: 0}")


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("score", "'high'", "score is a str"),
        ("score", "9e999", "score is inf"),
        ("score", "-9e999", "score is -inf"),
        ("high", "9e999", "high is inf"),
        ("baseline", "X'00ff'", "baseline is binary"),
    ],
)
def test_a_text_or_non_finite_score_is_set_aside_in_every_face(
    project: GitProject,
    capsys: pytest.CaptureFixture[str],
    column: str,
    value: str,
    why: str,
) -> None:
    path = _store(project.root)
    db = sqlite3.connect(path)
    db.execute(f"UPDATE scores SET {column} = {value} WHERE run_id = 3")
    db.commit()
    db.close()
    seen = _four_ways(project.root, capsys)
    for name, (_out, err) in seen.items():
        assert "1 recorded row set aside" in err and why in err, (name, err)
        assert "Traceback" not in err
    runs = _strict(seen["json"][0])["runs"]
    assert [r["run_id"] for r in runs] == [1, 2]  # the rest is shown
    assert seen["export"][0] == ""  # the newest run is the one set aside: nothing to export
    assert "52.00" not in seen["table"][0] and "51.00" in seen["table"][0]
    assert "1 recorded row set aside" in (project.root / "page.html").read_text()


def test_a_row_of_the_wrong_types_is_set_aside(
    project: GitProject, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _store(project.root)
    db = sqlite3.connect(path)
    # sqlite keeps a value of another type where the column's affinity cannot convert it
    db.execute("UPDATE runs SET created_at = X'00ff' WHERE id = 1")
    db.execute("UPDATE runs SET dirty = 'yes' WHERE id = 2")
    db.commit()
    db.close()
    seen = _four_ways(project.root, capsys)
    err = seen["table"][1]
    assert "2 recorded rows set aside" in err
    assert "run 1, qa exact_match: created_at is binary" in err
    assert "run 2, qa exact_match: dirty is a str (yes)" in err
    assert [r["run_id"] for r in _strict(seen["json"][0])["runs"]] == [3]


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("u.ids", "'[\"a\", '", "ids are not JSON"),
        ("u.ids", "'[\"a\"]'", "1 ids, 2 digests and 2 example scores"),
        ("u.digests", "'{\"a\": 1}'", "digests are not a JSON list"),
        ("u.ids", "'[' || printf('%.*c', 100000, '[') || ']'", "ids are not JSON"),
        ("s.example_scores", "'[1, \"x\"]'", "example scores are not all numbers"),
        ("s.example_scores", "'[1, Infinity]'", "example scores are not all numbers"),
        ("s.example_scores", "7", "example scores are not a JSON list"),
        ("s.example_scores", "X'00'", "example scores are binary, not JSON text"),
    ],
)
def test_bad_json_columns_and_wrong_length_ids_are_set_aside(
    project: GitProject,
    capsys: pytest.CaptureFixture[str],
    column: str,
    value: str,
    why: str,
) -> None:
    path = _store(project.root)
    table, name = column.split(".")
    db = sqlite3.connect(path)
    db.execute(
        f"UPDATE {'suites' if table == 'u' else 'scores'} SET {name} = {value} WHERE run_id = 2"
    )
    db.commit()
    db.close()
    seen = _four_ways(project.root, capsys)
    for name in ("table", "json", "html"):  # the per-example scores are read for flaky ones
        assert why in seen[name][1] and "set aside" in seen[name][1], (name, seen[name][1])
    document = _strict(seen["json"][0])
    assert [r["run_id"] for r in document["runs"]] == [1, 2, 3]  # its scores are still shown


def test_flaky_scores_without_a_score_are_null_in_json(
    project: GitProject, capsys: pytest.CaptureFixture[str]
) -> None:
    """NaN is kept where an example has no score on the metric; JSON says null."""
    path = project.root / ".goldgate" / "history.sqlite"
    for index, examples in enumerate([(math.nan, 0.0), (100.0, 0.0), (math.nan, 0.0)]):
        assert append_safely(path, _record(index, examples=examples))[1] == []
    assert main(["history", "--json"]) == 0
    flaky = _strict(capsys.readouterr().out)["flaky"]
    assert flaky == [
        {
            "suite": "qa",
            "metric": "exact_match",
            "id": "a",
            "flips": 2,
            "runs": 3,
            "scores": [None, 100.0, None],
        }
    ]


def test_a_non_finite_blessed_score_in_git_is_not_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    project = GitProject(tmp_path, n=10)
    assert main(["bless", "-q"]) == 0
    project.commit("bless")
    baseline = tmp_path / "goldgate.baseline.json"
    document = json.loads(baseline.read_text())
    document["suites"]["qa"]["metrics"]["exact_match"]["score"] = math.inf
    baseline.write_text(json.dumps(document))  # "Infinity", which Python's json reads
    project.commit("a hand-edited baseline")
    capsys.readouterr()
    assert main(["history", "--json"]) == 0
    blessed = _strict(capsys.readouterr().out)["blessed"]
    assert [len(b["scores"]) for b in blessed] == [1, 0]  # the damaged version has none


def test_damaged_pages_set_the_file_aside_and_the_history_still_shows(
    project: GitProject, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _store(project.root, runs=200)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 20 * page
    # the last three pages: the file opens, its schema reads, the damage is met by the query
    data[-3 * page :] = b"\xa5" * (3 * page)
    path.write_bytes(bytes(data))
    assert main(["history", "--json"]) == 0
    out, err = capsys.readouterr()
    assert _strict(out)["runs"] == []
    assert "set aside as history.sqlite.damaged-" in err, err
    assert main(["run", "-q"]) == 0  # a new history starts
    capsys.readouterr()
    assert main(["history", "--json"]) == 0
    assert len(_strict(capsys.readouterr().out)["runs"]) == 1


def test_a_table_missing_a_column_is_set_aside(
    project: GitProject, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _store(project.root)
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE scores DROP COLUMN status")
    db.commit()
    db.close()
    seen = _four_ways(project.root, capsys)
    err = seen["table"][1]
    assert "no such column: s.status" in err and "set aside as history.sqlite.damaged-" in err
    assert main(["run", "-q"]) == 0
    store, warnings = open_store(path)
    with store:
        assert warnings == [] and [r.status for r in store.rows()] == ["pass"]


@pytest.mark.timeout(120, method="thread")  # a hang kills the run rather than stalls it
def test_a_planted_trigger_cannot_hang_a_run(
    project: GitProject, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _store(project.root)
    db = sqlite3.connect(path)
    db.execute(f"CREATE TRIGGER forever AFTER INSERT ON runs BEGIN {ENDLESS}; END")
    db.commit()
    db.close()
    begin = time.monotonic()
    assert main(["run", "-q", "--json"]) == 0
    hints = json.loads(capsys.readouterr().out)["hints"]
    assert time.monotonic() - begin < 60
    assert any("holds a trigger goldgate never writes (forever)" in h for h in hints), hints
    store, _ = open_store(path)
    with store:
        assert store.count_runs() == 1  # recorded in a new history


@pytest.mark.timeout(120, method="thread")
def test_a_planted_view_cannot_hang_the_history(
    project: GitProject, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _store(project.root)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE suites")
    db.execute(
        "CREATE VIEW suites (run_id, suite, verdict, n_examples, ids, digests) AS"
        " WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)"
        " SELECT x, 'qa', 'pass', 2, '[]', '[]' FROM c WHERE x < 0"
    )
    db.commit()
    db.close()
    seen = _four_ways(project.root, capsys)
    assert "holds a view goldgate never writes (suites)" in seen["table"][1]


@pytest.mark.timeout(120, method="thread")
def test_every_statement_runs_under_a_time_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trigger planted while the store is open (so not seen when it was opened) is stopped
    by the time limit, and the run is a warning, not recorded."""
    path = _store(tmp_path, runs=1)
    store, _ = open_store(path)
    planter = sqlite3.connect(path)
    planter.execute(f"CREATE TRIGGER forever AFTER INSERT ON runs BEGIN {ENDLESS}; END")
    planter.commit()
    planter.close()
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.5)
    monkeypatch.setattr(store_module, "TIME_LIMIT_S", 0.5)
    begin = time.monotonic()
    with store, pytest.raises(sqlite3.OperationalError, match="interrupted"):
        store.append(_record(5))
    assert time.monotonic() - begin < 30
    monkeypatch.setattr(store_module, "_check_schema", lambda db: None)  # as if unseen
    run_id, warnings = append_safely(path, _record(6))
    assert run_id is None
    assert warnings == [f"history: run not recorded: {path}: stopped after 1 s (the time limit)"]


def test_last_zero_reads_the_newest_rows_at_most(
    project: GitProject, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _store(project.root, runs=12)
    monkeypatch.setattr(store_module, "MAX_ROWS", 5)
    assert main(["history", "--json", "--last", "0"]) == 0
    out, err = capsys.readouterr()
    assert [r["run_id"] for r in _strict(out)["runs"]] == [8, 9, 10, 11, 12]
    assert "more than 5 rows match: only the newest 5 are read" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--last", "1000001"],
        ["--last", str(2**64)],
        ["--since", "999999999d"],
        ["--since", "99999999w"],
        ["--since", "9" * 5000 + "d"],
        ["--since", "0001-01-01T00:00+05:00"],
        ["--since", "9999-12-31T23:00-05:00"],
    ],
)
def test_huge_last_and_since_are_refused(
    project: GitProject, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main(["history", *argv]) == 2
    err = capsys.readouterr().err
    assert argv[0] in err and "Traceback" not in err
