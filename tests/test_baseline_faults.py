"""Fault injection on the baseline: ``bless`` killed with SIGKILL at random points, and two
``bless --suite`` of different suites racing. The baseline is always a valid file, every bless
that completed is in it, and killed writers' temporaries are cleaned up by the next write.

The blesses are real ``goldgate bless`` command lines (``main``) in processes forked from the
test process, where goldgate is imported already, so that 90 of them take seconds, not minutes.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from goldgate.io.atomic import locked, remove_stale_temporaries
from goldgate.model.baseline_io import read_baseline
from tests.bless_child import bless, kill, start_bless, wait, warm_up

ROUNDS = 30
N = 60
SUITES = ("a", "b")


def make_project(root: Path) -> Path:
    suites = []
    for suite in SUITES:
        rows = [{"id": f"{suite}{i}", "input": str(i), "references": ["x"]} for i in range(N)]
        (root / f"{suite}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        suites.append(
            f"  {suite}:\n    goldens: {suite}.jsonl\n"
            f"    system: {{predictions: {suite}.out.jsonl}}\n"
            "    metrics: {exact_match: {}}\n"
        )
    (root / "goldgate.yaml").write_text("version: 1\nsuites:\n" + "".join(suites))
    return root


def set_round(root: Path, suite: str, number: int) -> None:
    """The suite's outputs name the round, so the baseline shows which bless it holds."""
    rows = [{"id": f"{suite}{i}", "output": f"round {number}"} for i in range(N)]
    (root / f"{suite}.out.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def blessed_round(root: Path, suite: str) -> int | None:
    baseline = read_baseline(root / "goldgate.baseline.json")  # raises if damaged
    entry = baseline.suites.get(suite)
    if entry is None:
        return None
    rounds = {example.outputs[0] for example in entry.examples.values()}
    assert len(rounds) == 1, rounds  # never half of one bless and half of another
    return int(rounds.pop().split()[1])


def test_bless_killed_at_random_points_never_damages_the_baseline(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    rng = random.Random(0)
    window = 1.2 * _timed_bless(root)  # a little longer than a bless takes here, today
    kills = 0
    completed: dict[str, int | None] = {"a": None, "b": -1}
    for number in range(ROUNDS):
        suite = SUITES[number % 2]
        set_round(root, suite, number)
        pid = start_bless(str(root), suite)
        # Somewhere between at once and a little after a bless ends; the window widens after
        # each kill, so that on a loaded machine some blesses still complete.
        time.sleep(rng.uniform(0, window))
        code = kill(pid)
        if code == 0:
            completed[suite] = number
        else:
            assert code == -9, code
            kills += 1
            window *= 1.1
        path = root / "goldgate.baseline.json"
        if path.exists():
            for name in SUITES:
                found = blessed_round(root, name)
                # a killed bless may have landed just before its kill: old or new, never less
                if completed[name] is not None:
                    assert found is not None and found >= completed[name]
                if name != suite:
                    assert found == completed[name]
                elif found is not None and found != completed[name]:
                    assert found == number
                    completed[name] = number
    assert 0 < kills < ROUNDS, "the kills should land both before and after completion"
    # One more write removes what killed writers left behind.
    set_round(root, "a", ROUNDS)
    assert bless(str(root), "a") == 0
    assert blessed_round(root, "a") == ROUNDS
    assert sorted(p.name for p in root.glob(".goldgate.baseline.json.*.tmp")) == []


def _timed_bless(root: Path) -> float:
    """Bless suite b (round -1) twice; the faster time."""
    set_round(root, "b", -1)
    warm_up(str(root), "b")
    times = []
    for _ in range(2):
        started = time.monotonic()
        assert bless(str(root), "b") == 0
        times.append(time.monotonic() - started)
    return min(times)


def test_two_blesses_of_different_suites_never_lose_an_update(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    set_round(root, "a", -1)
    warm_up(str(root), "a")
    for number in range(ROUNDS):
        for suite in SUITES:
            set_round(root, suite, number)
        children = [start_bless(str(root), suite) for suite in SUITES]
        assert [wait(pid) for pid in children] == [0, 0]
        assert [blessed_round(root, suite) for suite in SUITES] == [number, number]


def test_a_killed_writers_temporary_goes_only_its_own_file_s(tmp_path: Path) -> None:
    target = tmp_path / "goldgate.baseline.json"
    stale = tmp_path / ".goldgate.baseline.json.k3x9.tmp"
    other = tmp_path / ".report.html.k3x9.tmp"
    stale.write_text("half a baseline")
    other.write_text("half a report")
    with locked(tmp_path):
        assert remove_stale_temporaries(target) == [stale]
    assert not stale.exists() and other.exists()
