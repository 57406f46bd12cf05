"""Processes and time, through the real ``goldgate`` command: SIGTERM, hangs, timeouts.

Each project here is a tiny suite with a command system written in Python; the command
records its pid and its children's pids so a test can check that none survives goldgate.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

GOLDGATE = Path(sys.executable).parent / "goldgate"
N = 12

CONFIG = """
version: 1
system:
  command: [{python}, system.py]
  timeout_s: {timeout}
suites:
  qa:
    goldens: qa.jsonl
    metrics: {{exact_match: {{}}}}
significance: off
report: {{dir: out, formats: [json]}}
"""

# A command that answers slowly and has a child of its own (a worker pool, a server...):
# SIGTERM to goldgate must take the whole tree down.
SLOW_WITH_CHILD = """
import json, os, subprocess, sys, time
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)
with open("pids", "a") as f:
    f.write(f"{os.getpid()}\\n{child.pid}\\n")
for line in sys.stdin:
    item = json.loads(line)
    time.sleep(0.05)
    print(json.dumps({"id": item["id"], "output": "answer " + item["input"]}), flush=True)
    with open("calls", "a") as f:
        f.write(item["id"] + "\\n")
"""


def project(root: Path, system: str, *, timeout: float = 30) -> Path:
    rows = [{"id": f"q{i}", "input": str(i), "references": [f"answer {i}"]} for i in range(N)]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "system.py").write_text(textwrap.dedent(system))
    (root / "goldgate.yaml").write_text(
        CONFIG.format(python=json.dumps(sys.executable), timeout=timeout)
    )
    return root


def goldgate_run(root: Path) -> subprocess.CompletedProcess[str]:
    """``goldgate run -q`` in ``root``; a hang fails the test after a minute."""
    return subprocess.run(
        [str(GOLDGATE), "run", "-q"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def lines(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose (its parent, killed too, cannot reap it yet)
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def wait_for(condition: object, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.02)


@pytest.fixture
def reaped() -> Iterator[list[int]]:
    """Pids a test started indirectly; killed at the end whatever happened."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("signum", "code"),
    [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGQUIT, 131)],
    ids=["SIGTERM", "SIGHUP", "SIGQUIT"],
)
def test_a_stop_signal_stops_the_system_tree_keeps_the_cache_and_exits_128_plus_it(
    tmp_path: Path, reaped: list[int], signum: signal.Signals, code: int
) -> None:
    """SIGHUP (a closed terminal) and SIGQUIT ended goldgate at once and left the tree running."""
    root = project(tmp_path, SLOW_WITH_CHILD)
    process = subprocess.Popen(
        [str(GOLDGATE), "run", "-q"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: len(lines(root / "calls")) >= 3)
    pids = [int(p) for p in lines(root / "pids")]
    reaped += pids
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == code, err
    assert err.strip().splitlines()[-1] == f"goldgate: terminated ({signum.name})"
    assert "Traceback" not in out + err
    wait_for(lambda: not any(alive(pid) for pid in pids), 10)
    assert [pid for pid in pids if alive(pid)] == []
    cache = next((root / ".goldgate" / "cache").glob("qa-*.jsonl"))
    cached = [json.loads(line)["id"] for line in cache.read_text().splitlines()[1:]]
    assert len(cached) >= 3
    # the rerun pays only for what was not cached
    done = goldgate_run(root)
    reaped += [int(p) for p in lines(root / "pids")]
    assert done.returncode == 0, done.stderr
    assert len(lines(root / "calls")) <= N + 1


# A command that answers everything, then leaves a grandchild in a session of its own that
# keeps the stdout pipe open for five minutes.
SETSID_GRANDCHILD = """
import json, os, subprocess, sys
for line in sys.stdin:
    item = json.loads(line)
    print(json.dumps({"id": item["id"], "output": "answer " + item["input"]}), flush=True)
child = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True
)
with open("pids", "a") as f:
    f.write(f"{child.pid}\\n")
"""


def test_a_setsid_grandchild_holding_stdout_does_not_hold_goldgate(
    tmp_path: Path, reaped: list[int]
) -> None:
    root = project(tmp_path, SETSID_GRANDCHILD, timeout=120)
    started = time.monotonic()
    try:
        done = goldgate_run(root)  # far below timeout_s: the old code waited it out, then failed
    finally:
        reaped += [int(p) for p in lines(root / "pids")]
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 60


# Answers q0..q2, then at q3 does ACTION (hangs or crashes): q3..q11 are in flight.
FAILS_AT_Q3 = """
import json, sys, time
for line in sys.stdin:
    item = json.loads(line)
    if item["id"] == "q3":
        ACTION
    print(json.dumps({"id": item["id"], "output": "answer " + item["input"]}), flush=True)
"""
HANGS = FAILS_AT_Q3.replace("ACTION", "time.sleep(300)")
CRASHES = FAILS_AT_Q3.replace("ACTION", "sys.exit(5)")


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        (HANGS, "produced no output within timeout_s=1s and was killed (after 3 of 12"),
        (CRASHES, "exited with code 5 after 3 of 12"),
    ],
)
def test_a_command_that_hangs_or_crashes_names_the_ids_in_flight(
    tmp_path: Path, system: str, expected: str
) -> None:
    root = project(tmp_path, system, timeout=1)
    done = goldgate_run(root)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    in_flight = ", ".join(f"'q{i}'" for i in range(3, N))
    assert f"in flight (no output yet): {in_flight}" in done.stderr


BLOCKING_ASYNC = """
import time

async def answer(value):
    if value == "3":
        time.sleep(300)  # blocks the event loop: asyncio.wait_for cannot cancel it
    return "answer " + value
"""


def test_an_async_callable_that_blocks_its_event_loop_still_times_out(tmp_path: Path) -> None:
    root = project(tmp_path, "")
    (root / "gg_blocking.py").write_text(BLOCKING_ASYNC)
    config = (root / "goldgate.yaml").read_text()
    start = config.index("  command:")
    end = config.index("  timeout_s:")
    (root / "goldgate.yaml").write_text(
        config[:start] + '  callable: "gg_blocking:answer"\n  concurrency: 2\n' + config[end:]
    )
    (root / "goldgate.yaml").write_text(
        (root / "goldgate.yaml").read_text().replace("timeout_s: 30", "timeout_s: 1")
    )
    done = goldgate_run(root)  # the old code waited the whole 300 s sleep
    assert done.returncode == 2, done.stderr
    assert "system.callable 'gg_blocking:answer': no answer within timeout_s=1s for " in (
        done.stderr
    )
    assert "'q3'" in done.stderr
    assert "a call blocks the event loop" in done.stderr
