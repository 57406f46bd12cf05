"""``goldgate history --from FILE``: runs exported as JSON lines, read back as the store's rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.errors import InputError
from goldgate.history.exported import read_exported


def line(when: str, score: float, *, suite: str = "qa", status: str = "pass", **run: object) -> str:
    document = {
        "created_at": when,
        "commit": "a" * 40,
        "branch": "main",
        "dirty": False,
        "message": "change",
        "source": "run",
        "verdict": "pass" if status == "pass" else "regressed",
        "scores": [
            {
                "suite": suite,
                "metric": "exact_match",
                "signature": "s",
                "score": score,
                "low": None,
                "high": None,
                "baseline": 80.0,
                "status": status,
            }
        ],
        **run,
    }
    return json.dumps(document)


def test_lines_become_rows_and_bad_lines_are_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "goldgate-history.jsonl"
    lines = [
        line("2026-12-01T00:00:00+00:00", 80.0),
        "not json",
        line("2026-12-02T00:00:00+00:00", 70.0, status="fail"),
        line("2026-12-03T00:00:00+00:00", 81.0, suite="translate"),
        json.dumps({"scores": [{"suite": "qa", "score": "NaN"}]}),
        line("2026-12-04T00:00:00+00:00", 82.0, dirty="yes"),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows, warnings = read_exported(path)
    assert [(r.run_id, r.suite, r.score, r.status) for r in rows] == [
        (1, "qa", 80.0, "pass"),
        (3, "qa", 70.0, "fail"),
        (4, "translate", 81.0, "pass"),
    ]
    assert [w.split(":")[0] for w in warnings] == [
        "goldgate-history.jsonl line 2 set aside",
        "goldgate-history.jsonl line 5 set aside",
        "goldgate-history.jsonl line 6 set aside",
    ]
    qa_last, _ = read_exported(path, suites=["qa"], last=1)
    assert [r.score for r in qa_last] == [70.0]
    since, _ = read_exported(path, since="2026-12-02")
    assert [r.run_id for r in since] == [3, 4]


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_exported(tmp_path / "absent.jsonl")
