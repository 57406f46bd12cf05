"""The output cache: append-only, survives a kill mid-write, keyed by system, id, input, sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from goldgate.errors import GoldgateError
from goldgate.systems.cache import OutputCache, input_hash, read_entries

IDENTITY = {"kind": "command", "argv": ["python", "app.py"], "env": {}}


def test_entries_survive_a_new_instance(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path, "qa", IDENTITY)
    key = ("qa-1", input_hash("What?"), 0)
    assert cache.get(key) is None
    cache.put(key, "Yes")
    cache.put(("qa-1", input_hash("What?"), 1), "No\nreally")
    cache.close()
    again = OutputCache(tmp_path, "qa", IDENTITY)
    assert again.get(key) == "Yes"
    assert again.get(("qa-1", input_hash("What?"), 1)) == "No\nreally"
    assert len(again) == 2
    assert (tmp_path / ".gitignore").read_text().splitlines()[-1] == "*"


def test_key_parts_all_matter(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path, "qa", IDENTITY)
    cache.put(("a", input_hash("x"), 0), "out")
    cache.close()
    assert OutputCache(tmp_path, "qa", IDENTITY).get(("a", input_hash("x"), 0)) == "out"
    assert OutputCache(tmp_path, "qa", IDENTITY).get(("a", input_hash("y"), 0)) is None
    assert OutputCache(tmp_path, "qa", IDENTITY).get(("b", input_hash("x"), 0)) is None
    assert OutputCache(tmp_path, "qa", IDENTITY).get(("a", input_hash("x"), 1)) is None
    assert OutputCache(tmp_path, "other", IDENTITY).get(("a", input_hash("x"), 0)) is None
    changed = {**IDENTITY, "env": {"MODEL": "v2"}}
    assert OutputCache(tmp_path, "qa", changed).get(("a", input_hash("x"), 0)) is None


def test_input_hash_is_canonical() -> None:
    assert input_hash({"a": 1, "b": [1, "é"]}) == input_hash({"b": [1, "é"], "a": 1})
    assert input_hash("1") != input_hash(1)


def test_a_half_written_last_line_is_ignored_and_fenced_off(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path, "qa", IDENTITY)
    cache.put(("a", "h", 0), "first")
    cache.close()
    with cache.path.open("ab") as handle:  # a kill in the middle of a write
        handle.write(b'{"id":"b","input":"h","sample":0,"out')
    reopened = OutputCache(tmp_path, "qa", IDENTITY)
    assert len(reopened) == 1
    reopened.put(("c", "h", 0), "third")
    reopened.close()
    entries = read_entries(cache.path)
    assert entries == {("a", "h", 0): "first", ("c", "h", 0): "third"}
    lines = cache.path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and lines[-2].startswith(b'{"id":"c"')


def test_garbage_lines_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"id":"a","input":"h","sample":0,"output":"x"}\nnot json\n[1]\n'
        '{"id":"b","input":"h","sample":"0","output":"y"}\n\xff\n'
        '{"id":"a","input":"h","sample":0,"output":"later wins"}\n',
        encoding="latin-1",
    )
    assert read_entries(path) == {("a", "h", 0): "later wins"}
    assert read_entries(tmp_path / "missing.jsonl") == {}


def test_resume_mode_moves_a_completed_file_aside(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path, "qa", IDENTITY, mode="resume")
    cache.put(("a", "h", 0), "x")
    cache.complete()
    assert not cache.path.exists() and cache.last_path.exists()
    assert OutputCache(tmp_path, "qa", IDENTITY, mode="resume").get(("a", "h", 0)) is None


def test_reuse_mode_keeps_the_file(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path, "qa", IDENTITY, mode="reuse")
    cache.put(("a", "h", 0), "x")
    cache.complete()
    assert OutputCache(tmp_path, "qa", IDENTITY, mode="reuse").get(("a", "h", 0)) == "x"


def test_off_mode_writes_nothing(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path, "qa", IDENTITY, mode="off")
    cache.put(("a", "h", 0), "x")
    assert cache.get(("a", "h", 0)) == "x"  # still usable within the run
    cache.complete()
    assert not (tmp_path / "cache").exists()


def test_the_first_line_records_the_system(tmp_path: Path) -> None:
    cache = OutputCache(tmp_path, "qa", IDENTITY)
    cache.put(("a", "h", 0), "x")
    cache.close()
    header = json.loads(cache.path.read_text().splitlines()[0])
    assert header.pop("created_at").endswith("+00:00")
    assert header == {"goldgate_cache": 1, "system": IDENTITY}


def test_each_put_is_on_disk_before_a_sigkill(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from goldgate.systems.cache import OutputCache
        cache = OutputCache(Path({str(tmp_path)!r}), "qa", {IDENTITY!r})
        for i in range(50):
            cache.put((f"id-{{i}}", "h", 0), "out " * i)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    process = subprocess.run([sys.executable, "-c", script], check=False, env=os.environ.copy())
    assert process.returncode == -9
    entries = OutputCache(tmp_path, "qa", IDENTITY)
    assert len(entries) == 50
    assert entries.get(("id-49", "h", 0)) == "out " * 49


def test_an_unwritable_cache_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = OutputCache(blocker, "qa", IDENTITY)
    with pytest.raises(GoldgateError, match=r"cannot write the output cache.*system\.cache: off"):
        cache.put(("a", "h", 0), "x")
