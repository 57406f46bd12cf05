"""The blessed golden set file in pieces: ``check`` tells the blessed records in other bytes.

A packed suite read from one JSON Lines file keeps, beside the SHA-256 of the whole file, an
index of the file cut at newlines into pieces of about :data:`CHUNK_BYTES`: each piece's
length, how many records it holds, the SHA-256 of its bytes and :func:`records_hash` of its
records. When the file's bytes changed, ``check`` finds the pieces that are still there, at
the same place from the start or at the same place from the end (one region of the file
edited, and blank lines perhaps appended), and reads only the region between them. Its
records are grouped as the blessed pieces were, and each group must hash as its piece did:
then every record is the blessed one and the set is the blessed set (a blank line appended,
records reformatted, a ``meta`` edited). Otherwise the pieces found hold the first and the
last blessed records, and the region's records are what replaced the rest: ``check`` counts
the examples added, edited and removed from them and the blessed digests (see
``runner.check``). A problem in the region is left to reading every record, which words it
as always.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from goldgate.errors import GoldenSetError, GoldgateError
from goldgate.io.text_inputs import read_bytes
from goldgate.metrics.base import nrefs_label
from goldgate.model.golden_formats import JSONL_SUFFIXES, jsonl_records
from goldgate.model.golden_hashing import (
    RecordDigests,
    digest_bytes,
    fields_hash,
    hex_digests,
    records_hash,
)
from goldgate.model.golden_records import GoldenRecord, record_fields, record_lines
from goldgate.model.goldens import GoldenSet

#: about how many bytes of the golden set file one piece of the index covers
CHUNK_BYTES = 1 << 20


def file_chunks(golden: GoldenSet) -> list[str] | None:
    """The index of the file ``golden`` was read from, or None: not one JSON Lines file, or
    no longer the bytes it was read from (the index describes those records' bytes only)."""
    file_hash = golden.file_hash()
    if file_hash is None or golden.path.suffix.lower() not in JSONL_SUFFIXES:
        return None
    try:
        data = read_bytes(golden.path, GoldenSetError, what="golden set")
    except GoldgateError:
        return None
    if "sha256:" + hashlib.sha256(data).hexdigest() != file_hash:
        return None
    spans = list(_lines_of(data, 0, len(data)))
    view = memoryview(data)
    # the first line of each piece (lines are numbered from 1, each newline ends one)
    firsts = list(
        itertools.accumulate((data.count(b"\n", begin, end) for begin, end in spans), initial=1)
    )
    lines = record_lines(golden.records)
    if any(map(int.__ge__, lines, lines[1:])):  # not in file order: nothing to index
        return None
    pieces: list[str] = []
    at = 0
    for index, (begin, end) in enumerate(spans):
        last = index == len(spans) - 1
        stop = len(lines) if last else bisect.bisect_left(lines, firsts[index + 1], lo=at)
        # the records' fields, not the records: building them from packed text costs more
        held = record_fields(golden.records, at, stop)
        at = stop
        digest = hashlib.sha256(view[begin:end]).hexdigest()
        pieces.append(f"{end - begin}:{len(held)}:{digest}:{fields_hash(held)}")
    return pieces


@dataclass(frozen=True)
class FileComparison:
    """A JSON Lines file against the index of the blessed one: the pieces still there at
    the start and at the end, and the records read between them."""

    #: every record is the blessed one: the region's records hash, group by group, as the
    #: pieces they stand for did
    same: bool
    #: how many records the pieces found at the start hold (the first blessed ones)
    head: int
    #: how many records the pieces found at the end hold (the last blessed ones)
    tail: int
    #: the records read between them, in file order
    records: list[GoldenRecord]

    def digests(self, blessed_ids: Sequence[str], blessed_raw: bytes) -> RecordDigests | None:
        """id → digest of the file's records: the blessed ones (``blessed_ids`` and their
        digests' raw bytes, in file order) for the pieces found, the region's own between
        them. None when an id is there twice or a record cannot be hashed (reading every
        record words that), or when the region holds the very examples it replaced, in
        another order perhaps (only the content hash tells whether the set is the blessed
        one, or another whose digests collide)."""
        n = len(blessed_ids)
        if len(blessed_raw) != 8 * n or self.head + self.tail > n:
            return None
        try:
            raw = digest_bytes(self.records)
        except UnicodeEncodeError:  # a lone surrogate
            return None
        region = [record.id for record in self.records]
        ids = [*blessed_ids[: self.head], *region, *blessed_ids[n - self.tail :]]
        if not ids or len(set(ids)) != len(ids):
            return None
        replaced = hex_digests(blessed_raw[8 * self.head : 8 * (n - self.tail)])
        if sorted(zip(region, hex_digests(raw), strict=True)) == sorted(
            zip(blessed_ids[self.head : n - self.tail], replaced, strict=True)
        ):
            return None
        kept = blessed_raw[: 8 * self.head] + raw + blessed_raw[8 * (n - self.tail) :]
        return RecordDigests(ids, kept)

    def nrefs(self, blessed: str) -> str | None:
        """The ``nrefs`` label of the file's records (see ``nrefs_label``), from the label
        ``blessed`` gave to the blessed ones; None when that cannot tell it (``var`` then,
        and the region's records agree on one count: the pieces found may or may not)."""
        counts = {len(record.references) for record in self.records}
        if blessed == "var":
            return "var" if len(counts) > 1 else None
        if not blessed.isdigit():
            return None
        if self.head + self.tail:  # every record kept has the blessed count
            counts.add(int(blessed))
        return nrefs_label(list(counts))


def compare_records(path: Path, chunks: Sequence[str]) -> FileComparison | None:
    """The JSON Lines file at ``path`` against the blessed file indexed by ``chunks``: the
    pieces found where they were, from the start and from the end, and the region between
    them read as records. None when the file is not JSON Lines, cannot be read, or the region
    is not valid records (reading every record words the problem)."""
    if path.suffix.lower() not in JSONL_SUFFIXES:  # read otherwise, the records may differ
        return None
    try:
        data = read_bytes(path, GoldenSetError, what="golden set")
    except GoldgateError:
        return None
    pieces = [chunk.split(":") for chunk in chunks]
    lengths = [int(piece[0]) for piece in pieces]
    offsets = list(itertools.accumulate(lengths, initial=0))
    view = memoryview(data)

    def found(index: int, begin: int) -> bool:
        """Piece ``index`` is at ``begin``, whole lines of it."""
        end = begin + lengths[index]
        return (
            begin >= 0
            and end <= len(data)
            and (begin == 0 or data[begin - 1] == 0x0A)
            and (end == len(data) or data[end - 1] == 0x0A)
            and hashlib.sha256(view[begin:end]).hexdigest() == pieces[index][2]
        )

    first = 0  # the pieces before it are where they were
    while first < len(pieces) and found(first, offsets[first]):
        first += 1

    def found_from(shift: int) -> int:
        """The first of the pieces that are where they were, shifted by ``shift``, up to the
        end (the first piece stays first: a byte-order mark is one only at the start)."""
        last = len(pieces)
        while last > max(first, 1) and offsets[last - 1] + shift >= offsets[first]:
            if not found(last - 1, offsets[last - 1] + shift):
                break
            last -= 1
        return last

    # The blessed end is either the end of the file or, when blank lines were appended (and
    # an edit besides shifted what follows it), the end of the last line that is not blank.
    shift = len(data) - offsets[-1]
    last = found_from(shift)
    if last == len(pieces) and first < len(pieces):
        trimmed = _end_of_last_record(data) - offsets[-1]
        last_trimmed = found_from(trimmed) if trimmed != shift else last
        if last_trimmed < last:
            shift, last = trimmed, last_trimmed
    begin, end = offsets[first], offsets[last] + shift
    if begin > end:
        return None
    counts = [int(piece[1]) for piece in pieces]
    records: list[GoldenRecord] = []
    trail = offsets[-1] + shift  # where the last piece ends now: blank lines after it
    # the region a piece's worth of bytes at a time, then what follows the last piece
    for part_begin, part_end in [*_lines_of(data, begin, end), *_lines_of(data, trail, len(data))]:
        try:
            text = bytes(view[part_begin:part_end]).decode(
                "utf-8-sig" if part_begin == 0 else "utf-8"
            )
            read, _ = jsonl_records(text, path)
        except (UnicodeDecodeError, GoldgateError):
            return None
        if part_begin >= trail and read:
            return None  # records after the blessed end: another set, read whole
        records += read
    return FileComparison(
        same=_grouped_as(records, counts[first:last], [piece[3] for piece in pieces[first:last]]),
        head=sum(counts[:first]),
        tail=sum(counts[last:]),
        records=records,
    )


def _grouped_as(records: list[GoldenRecord], counts: list[int], hashes: list[str]) -> bool:
    """Whether ``records``, in groups of ``counts`` (a piece of blank lines only is a group
    of none), hash as the pieces' records did."""
    if len(records) != sum(counts):
        return False
    at = 0
    for count, expected in zip(counts, hashes, strict=True):
        try:
            if records_hash(records[at : at + count]) != expected:
                return False
        except UnicodeEncodeError:  # a lone surrogate: never blessed
            return False
        at += count
    return True


def _end_of_last_record(data: bytes) -> int:
    """Where the blank lines at the end of ``data`` start (its length when there are none, or
    when more than a mebibyte of them is not worth looking past)."""
    tail = data[-CHUNK_BYTES:]
    kept = len(tail.rstrip(b" \t\r\n"))
    if kept == 0:
        return len(data)
    newline = tail.find(b"\n", kept)
    return len(data) if newline < 0 else len(data) - len(tail) + newline + 1


def _lines_of(data: bytes, begin: int, end: int) -> Iterator[tuple[int, int]]:
    """``data[begin:end]`` in spans of about :data:`CHUNK_BYTES` that end lines."""
    while begin < end:
        newline = data.find(b"\n", begin + CHUNK_BYTES - 1, end)
        stop = end if newline < 0 else newline + 1
        yield begin, stop
        begin = stop
