"""``check`` of a golden set file whose bytes changed: the blessed index of the file in pieces
tells the blessed records in other bytes, reading only the region that changed.

Every case is checked twice, with the index and with it ignored (every record read), and
must find the same; the records are read only where the index cannot show the blessed set.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldgate.errors import BaselineError
from goldgate.model import baseline as baseline_module
from goldgate.model import golden_index as golden_file_index
from goldgate.model.baseline_io import read_baseline
from goldgate.model.config import Config
from goldgate.model.config_loading import load_config
from goldgate.model.golden_index import compare_records, file_chunks
from goldgate.model.goldens import load_goldens
from goldgate.pipeline import verify
from goldgate.pipeline.verify import SuiteCheck
from goldgate.runner import bless, check
from tests.test_scale import make_project

N = 60


def _project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, one_reference: bool = False
) -> Config:
    """60 examples in pieces of about 400 bytes (some twenty), blessed packed; with
    ``one_reference``, every example has one reference (nrefs 1, not var)."""
    make_project(tmp_path, N, seed=5)
    if one_reference:
        rows = [json.loads(line) for line in _goldens(tmp_path).read_text().splitlines()]
        path = _goldens(tmp_path)
        path.write_text(
            "".join(json.dumps({**r, "references": r["references"][:1]}) + "\n" for r in rows)
        )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", 10)
    monkeypatch.setattr(golden_file_index, "CHUNK_BYTES", 400)
    config = load_config(tmp_path / "goldgate.yaml")
    bless(config)
    return config


def same_records(path: Path, chunks: list[str]) -> bool:
    """Whether the file holds the blessed records, as the index shows them."""
    compared = compare_records(path, chunks)
    return compared is not None and compared.same


def _goldens(tmp_path: Path) -> Path:
    return tmp_path / "goldens" / "gen.jsonl"


def _checked(config: Config, monkeypatch: pytest.MonkeyPatch) -> tuple[list[SuiteCheck], bool]:
    """``check`` with the index, whether it read every record, and the same as without it
    (but for the content hash, which a change counted from the index does not compute)."""
    read: list[str] = []
    real = verify.load_suite_goldens

    def counting(config: Config, name: str) -> object:
        read.append(name)
        return real(config, name)

    with monkeypatch.context() as patched:
        patched.setattr(verify, "load_suite_goldens", counting)
        found = check(config)
        patched.setattr(verify, "compare_records", lambda *args: None)
        every_record = check(config)
    indexed = read == ["gen"]  # only the check without the index read the records
    if indexed and found[0].note is not None:
        assert found[0].golden_hash is None
        every_record = [replace(one, golden_hash=None) for one in every_record]
    assert found == every_record
    return found, not indexed


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


def _added_with_two_references(lines: list[str]) -> list[str]:
    row = {"id": "new", "input": "a new question", "references": ["an answer", "another"]}
    return [*lines[:-1], json.dumps(row), ""]


#: an edit, what ``check`` says of it, and whether it reads every record (in a set whose
#: examples have one reference each: the index tells nrefs then)
OTHER_RECORDS: dict[str, tuple[Callable[[list[str]], list[str]], str, bool]] = {
    "a reference edited": (_edit_reference, "0 added, 1 edited, 0 removed", False),
    "a record added at the end": (_added, "1 added, 0 edited, 0 removed", False),
    "one with two references added": (
        _added_with_two_references,
        "1 added, 0 edited, 0 removed",
        False,
    ),
    "a record removed": (
        lambda lines: [*lines[:12], *lines[13:]],
        "0 added, 0 edited, 1 removed",
        False,
    ),
    "a reference edited, blank lines appended": (
        lambda lines: [*_edit_reference(lines), "", " "],
        "0 added, 1 edited, 0 removed",
        False,
    ),
    "edited at both ends": (
        lambda lines: _edit_reference([_reformat(lines[0]), *lines[1:-2], "{}", ""]),
        "error",
        True,
    ),
    "the first and the last removed": (
        lambda lines: [*lines[1:-2], ""],
        "0 added, 0 edited, 2 removed",
        False,
    ),
    "records moved to another piece": (
        lambda lines: [lines[50], *lines[:50], *lines[51:]],
        "",  # the same set: only reading every record tells it
        True,
    ),
    "two lines joined": (
        lambda lines: [*lines[:25], lines[25] + lines[26], *lines[27:]],
        "error",
        True,
    ),
    "an id twice": (lambda lines: [*lines[:-1], lines[3], ""], "error", True),
    "an id of the region also in a piece found": (
        lambda lines: [*lines[:30], lines[3], *lines[31:]],
        "error",
        True,
    ),
}


@pytest.mark.parametrize("change", OTHER_RECORDS)
def test_other_records_are_found_as_reading_every_record_finds_them(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch, one_reference=True)
    path = _goldens(tmp_path)
    edit, expected, reads = OTHER_RECORDS[change]
    path.write_text("\n".join(edit(_lines(path))))
    found, read = _checked(config, monkeypatch)
    assert read == reads
    if expected == "error":
        assert found[0].error is not None
    elif expected:
        assert found[0].note is not None and expected in found[0].note
    else:
        assert found[0].error is None and found[0].note is None


def test_the_region_is_read_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit in the middle, blank lines appended besides: the pieces after the edit are
    found from the end of the last record, and only the edited piece is read."""
    config = _project(tmp_path, monkeypatch)
    path = _goldens(tmp_path)
    chunks = read_baseline(config.baseline).suites["gen"].golden_file_chunks
    assert chunks is not None
    path.write_text("\n".join([*_edit_reference(_lines(path)), "", "\t"]))
    compared = compare_records(path, chunks)
    assert compared is not None and not compared.same
    piece = int(chunks[_piece_of(config, 33)].split(":")[1])
    assert len(compared.records) == piece and compared.head + compared.tail == N - piece
    assert "e33" in [record.id for record in compared.records]


def test_the_count_of_references_is_told_from_the_blessed_one_and_the_region(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch, one_reference=True)
    path = _goldens(tmp_path)
    path.write_text("\n".join(_added_with_two_references(_lines(path))))
    chunks = read_baseline(config.baseline).suites["gen"].golden_file_chunks
    assert chunks is not None
    compared = compare_records(path, chunks)
    assert compared is not None and not compared.same
    assert [record.id for record in compared.records] == ["new"]
    assert (compared.head, compared.tail) == (N, 0)
    assert compared.nrefs("1") == "var"  # the blessed records have one, the new one two
    assert compared.nrefs("2") == "2"
    assert compared.nrefs("var") is None  # the blessed ones may all have two, or not


def test_a_varied_count_of_references_is_told_only_by_a_varied_region(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blessed with 1-3 references (nrefs var): a region whose records all have one cannot
    tell whether the rest still vary, so every record is read; one that varies can."""
    config = _project(tmp_path, monkeypatch)
    path = _goldens(tmp_path)
    original = _lines(path)
    path.write_text("\n".join(_edit_reference(original)))
    chunks = read_baseline(config.baseline).suites["gen"].golden_file_chunks
    assert chunks is not None
    compared = compare_records(path, chunks)
    assert compared is not None
    counts = {len(record.references) for record in compared.records}
    assert compared.nrefs("var") == ("var" if len(counts) > 1 else None)
    assert compared.nrefs("1") == ("1" if counts == {1} else "var")
    found, read = _checked(config, monkeypatch)
    assert read == (len(counts) == 1)
    assert found[0].note is not None and "1 edited" in found[0].note
    # the record given two references of its region's piece's others, and one of theirs
    rows = [json.loads(line) for line in original[:-1]]
    rows[33]["references"] = ["one", "two"]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    found, read = _checked(config, monkeypatch)
    assert found[0].note is not None and "1 edited" in found[0].note


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


def _edited_line(lines: list[str], at: int, kind: int) -> list[str]:
    """One edit of a golden set's lines (the last is the empty one after the last newline)."""
    at %= max(len(lines) - 1, 1)
    row = json.loads(lines[at]) if lines[at].strip().startswith("{") else None
    if kind == 0 and row is not None:  # a reference edited
        row["references"] = ["edited"]
        return [*lines[:at], json.dumps(row), *lines[at + 1 :]]
    if kind == 1:  # a line removed
        return [*lines[:at], *lines[at + 1 :]]
    if kind == 2:  # a record added
        new = {"id": f"new{at}-{len(lines)}", "input": "q", "references": ["a", "b"][: at % 2 + 1]}
        return [*lines[:at], json.dumps(new), *lines[at:]]
    if kind == 3:  # a record written otherwise
        return [*lines[:at], lines[at].replace('", "', '","'), *lines[at + 1 :]]
    if kind == 4:  # a line moved to the start
        return [lines[at], *lines[:at], *lines[at + 1 :]]
    if kind == 5:  # blank lines appended
        return [*lines, "", "  "]
    if kind == 6:  # an id twice
        return [*lines[:at], lines[0], *lines[at:]]
    if kind == 7:  # a line that is not a record
        return [*lines[:at], "not json", *lines[at:]]
    if kind == 8:  # a line ending in CRLF
        return [*lines[:at], lines[at] + "\r", *lines[at + 1 :]]
    return ["\ufeff" + lines[0].lstrip("\ufeff"), *lines[1:]]  # a byte-order mark


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 9)), min_size=1, max_size=4))
def test_any_edit_is_found_as_reading_every_record_finds_it(
    edits: list[tuple[int, int]],
    blessed_project: tuple[Config, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Whatever the edits, ``check`` with the index finds what it finds reading every record
    (``_checked`` compares them), and reads every record only where the index cannot tell."""
    config, original = blessed_project
    lines = original.split("\n")
    for at, kind in edits:
        lines = _edited_line(lines, at, kind)
    _goldens(config.root).write_text("\n".join(lines))
    _checked(config, monkeypatch)


@pytest.fixture(scope="module")
def blessed_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Config, str]]:
    """A project blessed as :func:`_project`'s, once for every example of a property, and
    its golden set's text."""
    root = tmp_path_factory.mktemp("indexed")
    with pytest.MonkeyPatch.context() as patched:
        config = _project(root, patched)
        text = _goldens(root).read_text()
        yield config, text
