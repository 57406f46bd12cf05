"""The blessed golden set file in pieces: ``check`` tells the blessed records in other bytes.

A packed suite read from one JSON Lines file keeps, beside the SHA-256 of the whole file, an
index of the file cut at newlines into pieces of about :data:`CHUNK_BYTES`: each piece's
length, how many records it holds, the SHA-256 of its bytes and :func:`records_hash` of its
records. When the file's bytes changed, ``check`` finds the pieces that are still there, at
the same place from the start or at the same place from the end (one region of the file
edited: a blank line appended, records reformatted, a ``meta`` edited), and reads only the
region between them. Its records are grouped as the blessed pieces were, and each group must
hash as its piece did: then every record is the blessed one and the set is the blessed set.
Anything else (a record added, removed or edited, or a problem in the region) is left to
reading every record, which words it as always.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

from goldgate.errors import GoldenSetError, GoldgateError
from goldgate.goldens import (
    JSONL_SUFFIXES,
    GoldenRecord,
    GoldenSet,
    jsonl_records,
    read_bytes,
    records_hash,
)

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
    lines = [record.line for record in golden.records]
    if any(map(int.__ge__, lines, lines[1:])):  # not in file order: nothing to index
        return None
    pieces: list[str] = []
    at = 0
    for index, (begin, end) in enumerate(spans):
        last = index == len(spans) - 1
        stop = len(lines) if last else bisect.bisect_left(lines, firsts[index + 1], lo=at)
        held = golden.records[at:stop]
        at = stop
        digest = hashlib.sha256(view[begin:end]).hexdigest()
        pieces.append(f"{end - begin}:{len(held)}:{digest}:{records_hash(held)}")
    return pieces


def same_records(path: Path, chunks: Sequence[str]) -> bool:
    """Whether the JSON Lines file at ``path`` holds the records indexed by ``chunks`` (see the
    module's docstring); False when that is not shown, which says nothing more."""
    if path.suffix.lower() not in JSONL_SUFFIXES:  # read otherwise, the records may differ
        return False
    try:
        data = read_bytes(path, GoldenSetError, what="golden set")
    except GoldgateError:
        return False
    pieces = [chunk.split(":") for chunk in chunks]
    lengths = [int(piece[0]) for piece in pieces]
    offsets = list(itertools.accumulate(lengths, initial=0))
    shift = len(data) - offsets[-1]
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
    last = len(pieces)  # the pieces from it on are where they were from the end
    # the first piece stays first: a byte-order mark is only one at the start of the file
    while last > max(first, 1) and offsets[last - 1] + shift >= offsets[first]:
        if not found(last - 1, offsets[last - 1] + shift):
            break
        last -= 1
    begin, end = offsets[first], offsets[last] + shift
    if begin > end:
        return False
    counts = [int(piece[1]) for piece in pieces[first:last]]
    hashes = [piece[3] for piece in pieces[first:last]]
    held: list[GoldenRecord] = []
    done = 0  # groups found so far

    def groups_match() -> bool:
        """Hash every group whose records are all held, each against its piece (a piece of
        blank lines only is a group of none); False at the first that differs."""
        nonlocal held, done
        while done < len(counts) and len(held) >= counts[done]:
            group, held = held[: counts[done]], held[counts[done] :]
            try:
                if records_hash(group) != hashes[done]:
                    return False
            except UnicodeEncodeError:  # a lone surrogate: never blessed
                return False
            done += 1
        return done < len(counts) or not held  # else more records than the pieces held

    # The region a piece's worth of bytes at a time, each group hashed as soon as its records
    # are in: an edited record fails at its own piece, not after the whole region is read.
    for part_begin, part_end in _lines_of(data, begin, end):
        try:
            text = bytes(view[part_begin:part_end]).decode(
                "utf-8-sig" if part_begin == 0 else "utf-8"
            )
            records, _ = jsonl_records(text, path)
        except (UnicodeDecodeError, GoldgateError):
            return False
        held += records
        if not groups_match():
            return False
    return groups_match() and done == len(counts) and not held


def _lines_of(data: bytes, begin: int, end: int) -> Iterator[tuple[int, int]]:
    """``data[begin:end]`` in spans of about :data:`CHUNK_BYTES` that end lines."""
    while begin < end:
        newline = data.find(b"\n", begin + CHUNK_BYTES - 1, end)
        stop = end if newline < 0 else newline + 1
        yield begin, stop
        begin = stop
