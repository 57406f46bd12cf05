"""Systems: predictions file, command and callable; clear errors; nothing paid for is lost.

The test systems append one line per call to a file, so every test can count the calls a
run really made, and a rerun after a crash can be shown to repeat none of them.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from goldgate.errors import InputError, SystemRunError
from goldgate.model.config import SystemConfig
from goldgate.model.goldens import GoldenSet, load_goldens
from goldgate.systems import command as systems_command
from goldgate.systems.cache import OutputCache, read_entries
from goldgate.systems.obtain import (
    command_identity,
    obtain_outputs,
    system_identity,
)
from goldgate.systems.predictions import read_predictions

REPO = Path(__file__).resolve().parents[1]


def make_golden(tmp_path: Path, n: int = 6, suite: str = "qa") -> GoldenSet:
    path = tmp_path / f"{suite}.jsonl"
    rows = [
        {"id": f"q{i}", "input": f"input {i}" if i % 2 else {"text": f"input {i}"},
         "reference": "r"}
        for i in range(n)
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_goldens(path, suite)


def expected_output(record_input: Any) -> str:
    text = record_input if isinstance(record_input, str) else record_input["text"]
    return text.upper()


def calls_of(path: Path) -> list[str]:
    return path.read_text().split() if path.exists() else []


# -- predictions file ------------------------------------------------------------------------


def write_lines(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_predictions_file_with_suite_placeholder(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 3)
    (tmp_path / "out").mkdir()
    write_lines(
        tmp_path / "out" / "qa.jsonl", [{"id": f"q{i}", "output": f"o{i}"} for i in (2, 0, 1)]
    )
    system = SystemConfig(predictions="out/{suite}.jsonl")
    outputs = obtain_outputs(system, golden, root=tmp_path, cache_dir=tmp_path / ".goldgate")
    assert outputs == {"q0": ["o0"], "q1": ["o1"], "q2": ["o2"]}
    assert list(outputs) == ["q0", "q1", "q2"]  # golden order
    assert not (tmp_path / ".goldgate").exists()  # no cache for a file


def test_predictions_with_several_samples(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 2)
    path = write_lines(
        tmp_path / "p.jsonl",
        [{"id": "q0", "outputs": ["a", "b"]}, {"id": "q1", "outputs": ["c", "d"]}],
    )
    assert read_predictions(path, golden, samples=2) == {"q0": ["a", "b"], "q1": ["c", "d"]}
    with pytest.raises(
        InputError, match=r"p.jsonl:1: id 'q0': 'outputs' holds 2 text\(s\), expected 3"
    ):
        read_predictions(path, golden, samples=3)
    single = write_lines(
        tmp_path / "s.jsonl", [{"id": "q0", "output": "a"}, {"id": "q1", "output": "c"}]
    )
    with pytest.raises(InputError, match=r"system\.samples is 2: give 'outputs'"):
        read_predictions(single, golden, samples=2)


def test_predictions_missing_ids_name_them(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 14)
    path = write_lines(
        tmp_path / "p.jsonl", [{"id": "q0", "output": "x"}, {"id": "q5", "output": "x"}]
    )
    with pytest.raises(SystemRunError) as info:
        read_predictions(path, golden)
    message = str(info.value)
    assert message.startswith(f"{path}: no output for 12 of 14 golden id(s): 'q1', 'q2', 'q3'")
    assert "and 2 more" in message


def test_predictions_unknown_ids_name_them_and_their_lines(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 2)
    rows = [{"id": "q0", "output": "x"}, {"id": "q1", "output": "x"}, {"id": "zz", "output": "x"}]
    path = write_lines(tmp_path / "p.jsonl", rows)
    with pytest.raises(SystemRunError) as info:
        read_predictions(path, golden)
    assert "1 id(s) not in the golden set" in str(info.value)
    assert "'zz' (line 3)" in str(info.value)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"id": "q0", "output": "x"}\n{"id": "q1", "output": \n', "p.jsonl:2:24: malformed JSON"),
        ('{"id": "q0", "output": "x"}\n{"id": "q0", "output": "y"}\n',
         "p.jsonl:2: duplicate id 'q0' (first on line 1)"),
        # the usual line first, then one the careful path reads (and the other way round)
        ('{"id": "q1", "output": "x"}\n{"id": "q1", "output": "y", "extra": 1}\n',
         "p.jsonl:2: duplicate id 'q1' (first on line 1)"),
        ('{"id": "q1", "output": "y", "extra": 1}\n{"id": "q1", "output": "x"}\n',
         "p.jsonl:2: duplicate id 'q1' (first on line 1)"),
        ('{"id": "zz", "output": "x"}\n{"id": "zz", "output": "x"}\n',
         "p.jsonl:2: duplicate id 'zz' (first on line 1)"),
        ('{"output": "x"}\n', "p.jsonl:1: the line has no 'id'"),
        ('{"id": "q0"}\n', "p.jsonl:1: id 'q0': no 'output'"),
        ('{"id": "q0", "output": null}\n', "'output' must be text, got null"),
        ('["q0", "x"]\n', "p.jsonl:1: expected an object"),
        (b'{"id": "q0", "output": "\xff"}\n', "p.jsonl:1:25: not valid UTF-8"),
        ('{"id": "q0", "output": "x\\ud800"}\n',
         "p.jsonl:1: id 'q0': 'output' holds a lone surrogate '\\ud800'"),
    ],
)  # fmt: skip
def test_predictions_file_errors(tmp_path: Path, text: str | bytes, expected: str) -> None:
    golden = make_golden(tmp_path, 2)
    path = tmp_path / "p.jsonl"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputError) as info:
        read_predictions(path, golden)
    assert str(info.value).startswith(str(path)) and expected in str(info.value)


def test_missing_predictions_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="predictions file not found"):
        read_predictions(tmp_path / "none.jsonl", make_golden(tmp_path))


# -- command ---------------------------------------------------------------------------------

# The behaviour comes from behaviour.json in the working directory (not the command line),
# so the system's identity, and with it the cache, stays the same from run to run.
COMMAND = r"""
import json, os, subprocess, sys, time
calls = os.environ["CALLS"]
try:
    with open("behaviour.json") as f:
        behaviour = json.load(f)
except FileNotFoundError:
    behaviour = {}
mode, after = behaviour.get("mode", "ok"), behaviour.get("after", 0)
if mode == "grandchild":
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open("pids", "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
requests = []
for count, line in enumerate(sys.stdin):
    request = json.loads(line)
    if count >= after and mode == "crash":
        print("Traceback: model server refused", file=sys.stderr)
        sys.exit(3)
    if count >= after and mode in ("hang", "grandchild"):
        time.sleep(60)
    if count >= after and mode == "garbage":
        print("Loading model weights...")
        continue
    if count >= after and mode == "unknown":
        print(json.dumps({"id": "nobody", "output": "x"}))
        continue
    if count >= after and mode == "skip":
        continue
    if count >= after and mode == "number":
        print(json.dumps({"id": request["id"], "output": 42}))
        continue
    if count >= after and mode == "latin1":
        sys.stdout.flush()
        sys.stdout.buffer.write(b'{"id": "%s", "output": "caf\xe9"}\n' % request["id"].encode())
        continue
    if count >= after and mode == "surrogate":
        print('{"id": "%s", "output": "caf\\udce9"}' % request["id"])
        continue
    with open(calls, "a") as f:
        f.write(request["id"] + "\n")
    text = request["input"] if isinstance(request["input"], str) else request["input"]["text"]
    out = {"id": request["id"], "output": text.upper()}
    if "sample" in request:
        out["output"] += f" #{request['sample']}"
        out["sample"] = request["sample"]
    if mode == "reverse":
        requests.append(out)
    else:
        print(json.dumps(out))
for out in reversed(requests):
    print(json.dumps(out))
if mode == "fail_at_end":
    sys.exit(1)
"""


@pytest.fixture
def command(tmp_path: Path) -> SystemConfig:
    script = tmp_path / "system.py"
    script.write_text(COMMAND, encoding="utf-8")
    return SystemConfig(
        command=[sys.executable, str(script)],
        env={"CALLS": str(tmp_path / "calls")},
        timeout_s=10,
    )


def behave(tmp_path: Path, mode: str, after: int = 0) -> None:
    (tmp_path / "behaviour.json").write_text(json.dumps({"mode": mode, "after": after}))


def run(system: SystemConfig, golden: GoldenSet, tmp_path: Path) -> dict[str, list[str]]:
    return obtain_outputs(system, golden, root=tmp_path, cache_dir=tmp_path / ".goldgate")


def test_command_outputs_in_any_order(tmp_path: Path, command: SystemConfig) -> None:
    golden = make_golden(tmp_path)
    behave(tmp_path, "reverse")
    outputs = run(command, golden, tmp_path)
    assert outputs == {r.id: [expected_output(r.input)] for r in golden.records}
    assert sorted(calls_of(tmp_path / "calls")) == sorted(r.id for r in golden.records)


def test_command_as_a_string_is_split_without_a_shell(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 2)
    script = tmp_path / "echo it.py"
    script.write_text(
        "import json, sys\nfor line in sys.stdin:\n"
        "    r = json.loads(line)\n    print(json.dumps({'id': r['id'], 'output': sys.argv[1]}))\n"
    )
    system = SystemConfig(command=f"{sys.executable} '{script}' '$HOME; echo hi'")
    assert run(system, golden, tmp_path) == {"q0": ["$HOME; echo hi"], "q1": ["$HOME; echo hi"]}


def test_command_samples(tmp_path: Path, command: SystemConfig) -> None:
    golden = make_golden(tmp_path, 3)
    system = command.model_copy(update={"samples": 2})
    outputs = run(system, golden, tmp_path)
    assert outputs["q1"] == ["INPUT 1 #0", "INPUT 1 #1"]
    assert len(calls_of(tmp_path / "calls")) == 6


def test_resume_cache_is_not_reused_after_a_complete_run(
    tmp_path: Path, command: SystemConfig
) -> None:
    golden = make_golden(tmp_path, 3)
    run(command, golden, tmp_path)
    run(command, golden, tmp_path)
    assert len(calls_of(tmp_path / "calls")) == 6  # a finished run is never replayed
    reuse = command.model_copy(update={"cache": "reuse"})
    run(reuse, golden, tmp_path)
    run(reuse, golden, tmp_path)
    assert len(calls_of(tmp_path / "calls")) == 9


def test_command_crash_names_exit_code_and_stderr_and_keeps_outputs(
    tmp_path: Path, command: SystemConfig
) -> None:
    golden = make_golden(tmp_path, 8)
    behave(tmp_path, "crash", after=3)
    with pytest.raises(SystemRunError) as info:
        run(command, golden, tmp_path)
    message = str(info.value)
    assert "system.command" in message and "exited with code 3" in message
    assert "after 3 of 8 output(s), which are cached" in message
    assert "model server refused" in message  # the stderr tail
    assert calls_of(tmp_path / "calls") == ["q0", "q1", "q2"]

    behave(tmp_path, "ok")
    outputs = run(command, golden, tmp_path)
    assert calls_of(tmp_path / "calls") == [f"q{i}" for i in range(8)]  # none repeated
    assert outputs == {r.id: [expected_output(r.input)] for r in golden.records}


def test_a_command_that_exited_is_reported_without_waiting_for_more_output(
    tmp_path: Path, command: SystemConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its stdout is already at end of file: there is nothing left to salvage, so the error
    # must not wait out the grace meant for a command that is still being killed.
    monkeypatch.setattr(systems_command, "KILL_GRACE_S", 5.0)
    behave(tmp_path, "crash", after=1)
    started = time.monotonic()
    with pytest.raises(SystemRunError, match="exited with code 3"):
        run(command, make_golden(tmp_path, 4), tmp_path)
    assert time.monotonic() - started < 4.0


def test_command_hang_is_killed_with_its_process_group(
    tmp_path: Path, command: SystemConfig
) -> None:
    golden = make_golden(tmp_path, 5)
    behave(tmp_path, "grandchild", after=2)
    system = command.model_copy(update={"timeout_s": 0.5})
    started = time.monotonic()
    with pytest.raises(SystemRunError) as info:
        run(system, golden, tmp_path)
    assert time.monotonic() - started < 8
    message = str(info.value)
    assert "produced no output within timeout_s=0.5s and was killed" in message
    assert "after 2 of 5 output(s)" in message
    parent, child = (int(p) for p in (tmp_path / "pids").read_text().split())
    for pid in (parent, child):
        assert _gone(pid), f"process {pid} still running"
    behave(tmp_path, "ok")
    run(system, golden, tmp_path)
    assert calls_of(tmp_path / "calls") == [f"q{i}" for i in range(5)]


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie child of this test process counts as gone once reaped
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:
            pass
        status = Path(f"/proc/{pid}/status")
        if status.exists() and "State:\tZ" in status.read_text():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("garbage", "printed a line that is not a JSON object with 'id' and 'output' "
                    "(stdout line 3): 'Loading model weights...'"),
        ("unknown", "unknown id 'nobody' (stdout line 3)"),
        ("number", "'output' for id 'q2' is int, not text (stdout line 3)"),
        ("latin1", "printed a line that is not valid UTF-8 (stdout line 3)"),
        ("surrogate", "'output' for id 'q2' holds a lone surrogate '\\udce9' (stdout line 3)"),
        ("skip", "exited without output for 4 of 6 call(s): 'q2', 'q3', 'q4', 'q5'"),
        ("fail_at_end", "exited with code 1 after 6 of 6 output(s)"),
    ],
)  # fmt: skip
def test_command_misbehaviour(
    tmp_path: Path, command: SystemConfig, mode: str, expected: str
) -> None:
    golden = make_golden(tmp_path)
    behave(tmp_path, mode, after=2)
    with pytest.raises(SystemRunError) as info:
        run(command, golden, tmp_path)
    assert expected in str(info.value)
    # The identity the run used: settings and the fingerprint of the command's code.
    _, identity = system_identity(command, root=tmp_path, ignore=[tmp_path / ".goldgate"])
    cached = OutputCache(tmp_path / ".goldgate", "qa", identity)
    assert len(cached) == (6 if mode == "fail_at_end" else 2)


def test_command_env_values_stay_out_of_the_cache_file(tmp_path: Path) -> None:
    system = SystemConfig(command=[sys.executable, "-c", "print(1)"], env={"API_KEY": "s3cret"})
    with pytest.raises(SystemRunError):
        run(system, make_golden(tmp_path, 2), tmp_path)  # prints garbage: fine, a cache exists
    other = command_identity(system.model_copy(update={"env": {"API_KEY": "other"}}))
    assert other != command_identity(system)
    cache = OutputCache(tmp_path / ".goldgate", "qa", command_identity(system))
    cache.put(("q0", "h", 0), "x")
    cache.close()
    assert "s3cret" not in cache.path.read_text()
    assert "API_KEY" in cache.path.read_text()


def test_command_not_found(tmp_path: Path) -> None:
    system = SystemConfig(command="no-such-program-goldgate --x")
    with pytest.raises(SystemRunError, match="program 'no-such-program-goldgate' not found"):
        run(system, make_golden(tmp_path), tmp_path)


def test_command_that_ignores_stdin_and_exits(tmp_path: Path) -> None:
    system = SystemConfig(command=[sys.executable, "-c", "import sys; sys.exit(0)"])
    with pytest.raises(SystemRunError, match="exited without output for 6 of 6"):
        run(system, make_golden(tmp_path), tmp_path)


def test_large_inputs_do_not_deadlock_the_pipes(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    rows = [{"id": f"b{i}", "input": "word " * 2000, "reference": "r"} for i in range(300)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    golden = load_goldens(path, "big")
    echo = (
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    print(json.dumps({'id': r['id'], 'output': r['input']}))\n"
    )
    system = SystemConfig(command=[sys.executable, "-c", echo], timeout_s=20)
    outputs = run(system, golden, tmp_path)
    assert len(outputs) == 300 and outputs["b7"] == ["word " * 2000]


# -- callable --------------------------------------------------------------------------------


def write_module(tmp_path: Path, body: str) -> str:
    """A uniquely named module in tmp_path (sys.modules keeps modules by name)."""
    name = f"gg_system_{uuid.uuid4().hex[:12]}"
    calls = tmp_path / "calls"
    prelude = f"import asyncio, threading, time\nCALLS = {str(calls)!r}\n"
    prelude += "def record(i):\n    open(CALLS, 'a').write(str(i).replace(' ', '_') + '\\n')\n"
    (tmp_path / f"{name}.py").write_text(prelude + textwrap.dedent(body), encoding="utf-8")
    return name


SYNC_SYSTEM = """
active = 0
peak = 0
lock = threading.Lock()
def answer(value):
    global active, peak
    with lock:
        active += 1
        peak = max(peak, active)
    time.sleep(0.1)
    with lock:
        active -= 1
    text = value if isinstance(value, str) else value["text"]
    record(text)
    return text.upper()
def peak_seen():
    return peak
"""

ASYNC_SYSTEM = """
active = 0
peak = 0
async def answer(value):
    global active, peak
    active += 1
    peak = max(peak, active)
    await asyncio.sleep(0.05)
    active -= 1
    text = value if isinstance(value, str) else value["text"]
    record(text)
    return text.upper()
"""


@pytest.mark.parametrize("body", [SYNC_SYSTEM, ASYNC_SYSTEM], ids=["sync", "async"])
def test_callable_concurrency_is_bounded(tmp_path: Path, body: str) -> None:
    golden = make_golden(tmp_path, 12)
    module = write_module(tmp_path, body)
    system = SystemConfig(callable=f"{module}:answer", concurrency=3)
    outputs = run(system, golden, tmp_path)
    assert outputs == {r.id: [expected_output(r.input)] for r in golden.records}
    assert sys.modules[module].peak == 3
    assert len(calls_of(tmp_path / "calls")) == 12


def test_async_callable_inside_a_running_event_loop(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 4)
    system = SystemConfig(callable=f"{write_module(tmp_path, ASYNC_SYSTEM)}:answer")

    async def main() -> dict[str, list[str]]:
        return run(system, golden, tmp_path)

    assert asyncio.run(main())["q3"] == ["INPUT 3"]


def test_callable_samples_call_each_input_several_times(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 3)
    module = write_module(
        tmp_path,
        "import itertools\nn = itertools.count()\n"
        "def answer(v):\n    record(v)\n    return f'out {next(n)}'\n",
    )
    outputs = run(
        SystemConfig(callable=f"{module}:answer", samples=4, concurrency=1), golden, tmp_path
    )
    assert [len(v) for v in outputs.values()] == [4, 4, 4]
    assert len({o for v in outputs.values() for o in v}) == 12
    assert len(calls_of(tmp_path / "calls")) == 12


FAILING = """
import os
def answer(value):
    text = value if isinstance(value, str) else value["text"]
    if os.path.exists({flag!r}) and text == "input 4":
        raise ConnectionError("rate limited")
    record(text)
    return text.upper()
async def answer_async(value):
    return answer(value)
"""


@pytest.mark.parametrize("function", ["answer", "answer_async"])
def test_callable_that_raises_keeps_outputs_and_rerun_repeats_none(
    tmp_path: Path, function: str
) -> None:
    flag = tmp_path / "fail"
    flag.touch()
    golden = make_golden(tmp_path, 8)
    module = write_module(tmp_path, FAILING.format(flag=str(flag)))
    system = SystemConfig(callable=f"{module}:{function}", concurrency=1)
    with pytest.raises(SystemRunError) as info:
        run(system, golden, tmp_path)
    message = str(info.value)
    assert f"system.callable '{module}:{function}': raised ConnectionError: rate limited" in message
    assert "(id 'q4')" in message and f"{module}.py:" in message
    assert calls_of(tmp_path / "calls") == ["input_0", "input_1", "input_2", "input_3"]
    flag.unlink()
    outputs = run(system, golden, tmp_path)
    assert len(calls_of(tmp_path / "calls")) == 8  # q0..q3 were not called again
    assert outputs == {r.id: [expected_output(r.input)] for r in golden.records}


def test_in_flight_calls_finish_and_are_cached_when_one_fails(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 8)
    module = write_module(
        tmp_path,
        """
        def answer(value):
            text = value if isinstance(value, str) else value["text"]
            if text == "input 0":
                time.sleep(0.1)  # the other three workers are busy by now
                raise ValueError("bad input")
            time.sleep(0.4)
            record(text)
            return text
        """,
    )
    system = SystemConfig(callable=f"{module}:answer", concurrency=4)
    with pytest.raises(SystemRunError, match="raised ValueError: bad input"):
        run(system, golden, tmp_path)
    called = calls_of(tmp_path / "calls")
    assert sorted(called) == ["input_1", "input_2", "input_3"]  # in flight, then no new calls
    cache_files = list((tmp_path / ".goldgate" / "cache").glob("qa-*.jsonl"))
    assert len(read_entries(cache_files[0])) == 3


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_callable_timeout(tmp_path: Path, kind: str) -> None:
    golden = make_golden(tmp_path, 4)
    sleep = "time.sleep(30)" if kind == "sync" else "await asyncio.sleep(30)"
    module = write_module(
        tmp_path,
        f"""
        {"async " if kind == "async" else ""}def answer(value):
            if value == "input 1":
                {sleep}
            return "ok"
        """,
    )
    system = SystemConfig(callable=f"{module}:answer", timeout_s=0.3, concurrency=1)
    started = time.monotonic()
    with pytest.raises(SystemRunError) as info:
        run(system, golden, tmp_path)
    assert time.monotonic() - started < 5
    assert "no answer within timeout_s=0.3s (id 'q1')" in str(info.value)


@pytest.mark.parametrize(
    ("body", "target", "expected"),
    [
        ("def answer(v):\n    return 3\n", "answer",
         "returned int for id 'q0'; it must return text"),
        ("def answer(v):\n    return None\n", "answer", "returned null for id 'q0'"),
        ("def answer(v):\n    return 'caf\\udce9'\n", "answer",
         "returned text with a lone surrogate '\\udce9' for id 'q0'"),
        ("def answer(v):\n    return 'x'\n", "anwser", "has no 'anwser' (did you mean 'answer'?)"),
        ("answer = 3\n", "answer", "'answer' is a int, not a function"),
        ("raise RuntimeError('no GPU')\n", "answer", "cannot import"),
    ],
)  # fmt: skip
def test_callable_mistakes(tmp_path: Path, body: str, target: str, expected: str) -> None:
    module = write_module(tmp_path, body)
    system = SystemConfig(callable=f"{module}:{target}", concurrency=1)
    with pytest.raises(SystemRunError) as info:
        run(system, make_golden(tmp_path, 2), tmp_path)
    assert expected in str(info.value)
    assert str(info.value).startswith(f"system.callable '{module}:{target}'")


def test_missing_module(tmp_path: Path) -> None:
    with pytest.raises(SystemRunError, match="cannot import 'no_such_gg_module': ModuleNotFound"):
        run(SystemConfig(callable="no_such_gg_module:f"), make_golden(tmp_path), tmp_path)


def test_editing_the_module_starts_a_fresh_cache(tmp_path: Path) -> None:
    golden = make_golden(tmp_path, 4)
    module = write_module(tmp_path, FAILING.format(flag=str(tmp_path / "fail")))
    (tmp_path / "fail").touch()
    system = SystemConfig(callable=f"{module}:answer", concurrency=1)
    with pytest.raises(SystemRunError):
        run(system, make_golden(tmp_path, 6), tmp_path)
    assert len(calls_of(tmp_path / "calls")) == 4
    source = tmp_path / f"{module}.py"
    source.write_text(source.read_text() + "\n# changed\n")
    del sys.modules[module]
    run(system, golden, tmp_path)
    assert len(calls_of(tmp_path / "calls")) == 8  # the edited system answers afresh


def test_progress_counts_cached_and_new_outputs(tmp_path: Path, command: SystemConfig) -> None:
    events: list[Any] = []

    class Recorder:
        def start(self, total: int, label: str) -> None:
            events.append(("start", total, label))

        def advance(self, n: int = 1) -> None:
            events.append(("advance", n))

        def finish(self) -> None:
            events.append(("finish",))

    golden = make_golden(tmp_path, 5)
    behave(tmp_path, "crash", after=2)
    with pytest.raises(SystemRunError):
        obtain_outputs(
            command, golden, root=tmp_path, cache_dir=tmp_path / ".g", progress=Recorder()
        )
    assert events[0] == ("start", 5, "qa: command") and events[-1] == ("finish",)
    events.clear()
    behave(tmp_path, "ok")
    obtain_outputs(command, golden, root=tmp_path, cache_dir=tmp_path / ".g", progress=Recorder())
    assert events[1] == ("advance", 2)  # the cached ones at once
    assert sum(e[1] for e in events if e[0] == "advance") == 5


# -- killing goldgate itself midway ----------------------------------------------------------

DRIVER = """
import signal
import sys
from pathlib import Path
# A process started with SIGINT ignored (a background job of a non-interactive shell, as a CI
# step or `cmd &` may be) passes that on, and Python then never raises KeyboardInterrupt.
signal.signal(signal.SIGINT, signal.default_int_handler)
from goldgate.model.config import SystemConfig
from goldgate.model.goldens import load_goldens
from goldgate.systems.obtain import obtain_outputs
root = Path(sys.argv[1])
system = SystemConfig.model_validate_json(sys.argv[2])
golden = load_goldens(root / "qa.jsonl", "qa")
obtain_outputs(system, golden, root=root, cache_dir=root / ".goldgate")
"""

SLOW = """
def answer(value):
    text = value if isinstance(value, str) else value["text"]
    time.sleep(0.03)
    record(text)
    return text.upper()
"""


@pytest.mark.parametrize(
    ("kind", "sig"),
    [("callable", signal.SIGKILL), ("callable", signal.SIGINT), ("command", signal.SIGINT),
     ("command", signal.SIGKILL)],
)  # fmt: skip
def test_killing_goldgate_midway_loses_no_paid_output(
    tmp_path: Path, kind: str, sig: signal.Signals
) -> None:
    n = 40
    golden = make_golden(tmp_path, n)
    if kind == "callable":
        system = SystemConfig(callable=f"{write_module(tmp_path, SLOW)}:answer", concurrency=1)
    else:
        script = tmp_path / "system.py"
        script.write_text(
            COMMAND.replace("    with open(calls", "    time.sleep(0.03)\n    with open(calls")
        )
        system = SystemConfig(
            command=[sys.executable, str(script)], env={"CALLS": str(tmp_path / "calls")}
        )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(tmp_path)])}
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(tmp_path), system.model_dump_json()],
        env=env,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while len(calls_of(tmp_path / "calls")) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(sig)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode != 0, stderr.decode()
    if sig == signal.SIGINT:
        assert b"KeyboardInterrupt" in stderr
    time.sleep(0.2)  # a command orphaned by SIGKILL dies of a broken pipe on its next write
    paid = calls_of(tmp_path / "calls")
    assert 8 <= len(paid) < n
    cache_file = next((tmp_path / ".goldgate" / "cache").glob("qa-*.jsonl"))
    cached = {record_id for record_id, _, _ in read_entries(cache_file)}
    # Lost at most: the one output between the system's answer and its arrival. A command
    # orphaned by a SIGKILL also loses what was still in the pipe, which nothing can read.
    lost = n if (kind, sig) == ("command", signal.SIGKILL) else 1
    assert len(paid) - len(cached) <= lost

    outputs = run(system, golden, tmp_path)
    again = calls_of(tmp_path / "calls")[len(paid) :]
    assert not set(again) & {golden.by_id()[i].input if isinstance(golden.by_id()[i].input, str)
                             else golden.by_id()[i].input["text"] for i in cached}  # fmt: skip
    assert len(paid) + len(again) <= n + lost
    assert outputs == {r.id: [expected_output(r.input)] for r in golden.records}


def test_the_first_lines_of_ids_are_a_mapping_over_golden_and_other_ids() -> None:
    from goldgate.systems.predictions import _FirstLines

    lines = _FirstLines({"a": 0, "b": 1})
    lines.note(1, 7)
    lines["zz"] = 9
    assert dict(lines) == {"b": 7, "zz": 9} and len(lines) == 2
    assert "b" in lines and "a" not in lines and 3 not in lines
    with pytest.raises(KeyError):
        lines["a"]
    lines["a"] = 0  # a line numbered 0 (a Parquet row) is seen too
    del lines["b"], lines["zz"]
    assert dict(lines) == {"a": 0}
