"""``check`` of a golden set file whose bytes changed: the blessed index of the file in pieces
tells the blessed records in other bytes, reading only the region that changed.

Every case is checked twice, with the index and with it ignored (every record read), and
must find the same; the records are read only where the index cannot show the blessed set.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from goldgate import baseline as baseline_module
from goldgate import golden_file_index, runner
from goldgate.baseline import read_baseline
from goldgate.config import Config, load_config
from goldgate.errors import BaselineError
from goldgate.golden_file_index import file_chunks, same_records
from goldgate.goldens import load_goldens
from goldgate.runner import SuiteCheck, bless, check
from tests.test_scale import make_project

N = 60


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """60 examples in pieces of about 400 bytes (some twenty), blessed packed."""
    make_project(tmp_path, N, seed=5)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", 10)
    monkeypatch.setattr(golden_file_index, "CHUNK_BYTES", 400)
    config = load_config(tmp_path / "goldgate.yaml")
    bless(config)
    return config


def _goldens(tmp_path: Path) -> Path:
    return tmp_path / "goldens" / "gen.jsonl"


def _checked(config: Config, monkeypatch: pytest.MonkeyPatch) -> tuple[list[SuiteCheck], bool]:
    """``check`` with the index, whether it read the records, and the same as without it."""
    read: list[str] = []
    real = runner.load_suite_goldens

    def counting(config: Config, name: str) -> object:
        read.append(name)
        return real(config, name)

    with monkeypatch.context() as patched:
        patched.setattr(runner, "load_suite_goldens", counting)
        found = check(config)
        patched.setattr(runner, "same_records", lambda *args: False)
        assert check(config) == found
    return found, read == ["gen", "gen"]


def test_bless_indexes_the_file_in_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _project(tmp_path, monkeypatch)
    data = _goldens(tmp_path).read_bytes()
    chunks = read_baseline(config.baseline).suites["gen"].golden_file_chunks
    assert chunks is not None and len(chunks) > 10
    pieces = [chunk.split(":") for chunk in chunks]
    assert sum(int(piece[0]) for piece in pieces) == len(data)
    assert sum(int(piece[1]) for piece in pieces) == N
    at = 0
    for piece in pieces:  # each ends a line
        at += int(piece[0])
        assert data[at - 1 : at] == b"\n"
    assert same_records(_goldens(tmp_path), chunks)


def _lines(path: Path) -> list[str]:
    return path.read_text().split("\n")


def _reformat(line: str) -> str:
    return json.dumps(json.loads(line), separators=(",", ":"))


def _with_meta(line: str) -> str:
    return json.dumps({**json.loads(line), "meta": {"note": "reviewed"}})


SAME_RECORDS: dict[str, Callable[[list[str]], list[str]]] = {
    "a blank line appended": lambda lines: [*lines, ""],
    "the last newline dropped": lambda lines: lines[:-1],
    "a blank line in the middle": lambda lines: [*lines[:30], "   ", *lines[30:]],
    "a record reformatted": lambda lines: [*lines[:20], _reformat(lines[20]), *lines[21:]],
    "a meta edited": lambda lines: [*lines[:41], _with_meta(lines[41]), *lines[42:]],
    "the first record reformatted": lambda lines: [_reformat(lines[0]), *lines[1:]],
    "two neighbours swapped": lambda lines: [*lines[:7], lines[8], lines[7], *lines[9:]],
    "every line ends in CRLF": lambda lines: [line + "\r" for line in lines[:-1]] + [""],
    "a byte-order mark added": lambda lines: ["\ufeff" + lines[0], *lines[1:]],
}


@pytest.mark.parametrize("change", SAME_RECORDS)
def test_the_blessed_records_in_other_bytes_are_not_read(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch)
    path = _goldens(tmp_path)
    lines = _lines(path)
    if change == "two neighbours swapped":  # in one piece, as the test means
        assert _piece_of(config, 7) == _piece_of(config, 8)
    text = "\n".join(SAME_RECORDS[change](lines))
    assert text.encode() != path.read_bytes()
    path.write_bytes(text.encode())
    found, read = _checked(config, monkeypatch)
    assert not read
    assert found[0].error is None and found[0].note is None and found[0].n_examples == N


def _piece_of(config: Config, record: int) -> int:
    chunks = read_baseline(config.baseline).suites["gen"].golden_file_chunks
    assert chunks is not None
    counts = [int(chunk.split(":")[1]) for chunk in chunks]
    total = 0
    for index, count in enumerate(counts):
        total += count
        if record < total:
            return index
    raise AssertionError(record)


def _edit_reference(lines: list[str]) -> list[str]:
    row = json.loads(lines[33])
    row["references"] = ["something else"]
    return [*lines[:33], json.dumps(row), *lines[34:]]


def _added(lines: list[str]) -> list[str]:
    row = {"id": "new", "input": "a new question", "references": ["an answer"]}
    return [*lines[:-1], json.dumps(row), ""]


OTHER_RECORDS: dict[str, tuple[Callable[[list[str]], list[str]], str]] = {
    "a reference edited": (_edit_reference, "0 added, 1 edited, 0 removed"),
    "a record added at the end": (_added, "1 added, 0 edited, 0 removed"),
    "a record removed": (lambda lines: [*lines[:12], *lines[13:]], "0 added, 0 edited, 1 removed"),
    "records moved to another piece": (
        lambda lines: [lines[50], *lines[:50], *lines[51:]],
        "",  # the same set, read to be shown
    ),
    "two lines joined": (lambda lines: [*lines[:25], lines[25] + lines[26], *lines[27:]], "error"),
    "an id twice": (lambda lines: [*lines[:-1], lines[3], ""], "error"),
}


@pytest.mark.parametrize("change", OTHER_RECORDS)
def test_other_records_are_read_and_found_as_always(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch)
    path = _goldens(tmp_path)
    edit, expected = OTHER_RECORDS[change]
    path.write_text("\n".join(edit(_lines(path))))
    found, read = _checked(config, monkeypatch)
    assert read
    if expected == "error":
        assert found[0].error is not None
    elif expected:
        assert found[0].note is not None and expected in found[0].note
    else:
        assert found[0].error is None and found[0].note is None


def test_pieces_are_taken_only_at_the_start_of_a_line(tmp_path: Path) -> None:
    """A piece's bytes found after a character that is not a newline are not that piece's
    lines: the line they end is another record."""
    path = tmp_path / "set.jsonl"
    rows = [{"id": f"r{i}", "input": "q", "references": ["a"]} for i in range(8)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    golden = load_goldens(path, "s")
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(golden_file_index, "CHUNK_BYTES", 100)
        chunks = file_chunks(golden)
    assert chunks is not None and len(chunks) >= 3
    data = path.read_bytes()
    assert same_records(path, chunks)
    # the newline before the last piece dropped: that piece's bytes are still there, from
    # the end, and the piece before it still parses on its own, but the line joins two
    # records (not JSON)
    last = len(data) - int(chunks[-1].split(":")[0])
    path.write_bytes(data[: last - 1] + data[last:])
    assert not same_records(path, chunks)
    path.write_bytes(data + b"{")
    assert not same_records(path, chunks)
    path.write_bytes(data)
    assert same_records(path, chunks)


def test_no_index_where_it_cannot_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    yaml = tmp_path / "set.yaml"
    yaml.write_text("- id: a\n  input: x\n  references: [y]\n")
    assert file_chunks(load_goldens(yaml, "s")) is None
    jsonl = tmp_path / "set.jsonl"
    jsonl.write_text('{"id": "a", "input": "x", "references": ["y"]}\n')
    golden = load_goldens(jsonl, "s")
    assert file_chunks(golden) is not None
    jsonl.write_text('{"id": "a", "input": "x", "references": ["z"]}\n')
    assert file_chunks(golden) is None  # the file is no longer what was read
    assert not same_records(yaml, ["1:0:" + "0" * 64 + ":" + "0" * 64])

    # a small suite is blessed unpacked, with no index
    (tmp_path / "small").mkdir()
    make_project(tmp_path / "small", 20, seed=2)
    monkeypatch.chdir(tmp_path / "small")
    config = load_config(tmp_path / "small" / "goldgate.yaml")
    bless(config)
    assert read_baseline(config.baseline).suites["gen"].golden_file_chunks is None
    assert '"golden_file_chunks"' not in config.baseline.read_text()


def test_a_damaged_index_is_a_damaged_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch)
    document = json.loads(config.baseline.read_text())
    chunks = document["suites"]["gen"]["golden_file_chunks"]
    length, count, data_hash, records_hash = chunks[2].split(":")
    chunks[2] = f"{length}:{int(count) + 1}:{data_hash}:{records_hash}"
    config.baseline.write_text(json.dumps(document))
    with pytest.raises(BaselineError, match=r"suite 'gen': golden_file_chunks hold another"):
        read_baseline(config.baseline)
    for damaged in (
        f"{length}:{count}:{data_hash[:10]}:{records_hash}",
        f"{length}:{'9' * 5000}:{data_hash}:{records_hash}",  # past int()'s 4,300 digits
    ):
        chunks[2] = damaged
        config.baseline.write_text(json.dumps(document))
        with pytest.raises(BaselineError, match=r"damaged baseline: suites\.gen\.golden_file_chu"):
            read_baseline(config.baseline)
