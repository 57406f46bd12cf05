"""Golden records, and a large golden set's records kept as columns of text.

A million short records held as :class:`GoldenRecord` objects cost ~500 bytes each, most of
it Python's headers: the record, a str for the input and for each reference, the tuple of
references, the line's int. Held as columns (:class:`PackedRecords`) they cost about the
characters themselves plus a few bytes of offsets: every input and reference of a block of
records is one str, cut back into pieces when a record is read. A record is built only when
it is asked for, and the columns a run reads of every record (ids, reference counts, tags,
lines) are answered without building one.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from types import MappingProxyType
from typing import Any, overload

#: the ``meta`` of every record without one: shared, and read-only so that sharing is safe
NO_META: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class GoldenRecord:
    """One golden example; ``line`` is its 1-based line (JSONL, CSV) or item number (YAML)."""

    id: str
    input: Any
    references: tuple[str, ...]
    tags: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=lambda: NO_META)
    line: int = 0


@dataclass(slots=True)
class UnfrozenRecord:
    """:class:`GoldenRecord`'s very layout, not frozen: a record made in bulk is built as
    this (a frozen dataclass sets each field through ``object.__setattr__``, three times
    slower, a second per million records) and then made a GoldenRecord, which Python
    allows between classes of the same slots."""

    id: str
    input: Any
    references: tuple[str, ...]
    tags: tuple[str, ...]
    meta: Mapping[str, Any]
    line: int


def quick_record(
    record_id: str,
    value: Any,
    references: tuple[str, ...],
    tags: tuple[str, ...],
    meta: Mapping[str, Any],
    line: int,
) -> GoldenRecord:
    """A :class:`GoldenRecord` of these fields, made without the frozen class's setters."""
    record = UnfrozenRecord(record_id, value, references, tags, meta, line)
    record.__class__ = GoldenRecord  # type: ignore[assignment]
    return record  # type: ignore[return-value]


#: a record's id, input, references and tags
RecordFields = tuple[str, Any, tuple[str, ...], tuple[str, ...]]

#: records per block of text: a character outside Latin-1 widens only its own block's str
_BLOCK = 4096


class PackedRecords(Sequence[GoldenRecord]):
    """Golden records as columns, in order; equal to any sequence of the same records.

    Per block of :data:`_BLOCK` records: one str of every input and reference, the end of
    each piece in it, and where each record's pieces start (its input, then its
    references). Inputs that are not text and ``meta`` other than :data:`NO_META` are kept
    aside by position (sets have few); ids and tags are the objects read.
    """

    __slots__ = (
        "_cut",
        "_ends",
        "_firsts",
        "_ids",
        "_inputs",
        "_lines",
        "_metas",
        "_tags",
        "_texts",
    )

    def __init__(self) -> None:
        """No records yet: :class:`RecordPacker` adds them a block at a time."""
        self._ids: list[str] = []
        self._tags: list[tuple[str, ...]] = []
        self._lines = array("q")
        self._inputs: dict[int, Any] = {}
        self._metas: dict[int, Mapping[str, Any]] = {}
        self._texts: list[str] = []
        self._ends: list[array[int]] = []
        self._firsts: list[array[int]] = []
        #: the block cut last, kept: slices read in order often start in the block the
        #: slice before them ended in (its pieces are not cut out again)
        self._cut: tuple[int, list[str], list[int]] | None = None

    def add_block(self, records: Sequence[GoldenRecord]) -> bool:
        """Pack the next block, :data:`_BLOCK` records (fewer for the last one), unless a
        reference in it is not exactly a str (what is cut back out of a block's text must
        be what went in): whether it was packed. An input that is not exactly a str is
        kept aside as it is."""
        pieces: list[str] = []
        add, add_all = pieces.append, pieces.extend
        firsts = array("I", [0])
        inputs: dict[int, Any] = {}
        metas: dict[int, Mapping[str, Any]] = {}
        for position, record in enumerate(records, len(self._ids)):
            value = record.input
            if type(value) is str:
                add(value)
            else:
                add("")
                inputs[position] = value
            add_all(record.references)
            firsts.append(len(pieces))
            if record.meta is not NO_META:
                metas[position] = record.meta
        if not set(map(type, pieces)) <= {str}:
            return False
        self._inputs.update(inputs)
        self._metas.update(metas)
        self._texts.append("".join(pieces))
        self._ends.append(array("I", accumulate(map(len, pieces))))
        self._firsts.append(firsts)
        self._ids.extend([record.id for record in records])
        self._tags.extend([record.tags for record in records])
        self._lines.extend([record.line for record in records])
        return True

    # -- columns read of every record, without building records --------------------------

    @property
    def ids(self) -> list[str]:
        """Every record's id, in order (the list itself: do not change it)."""
        return self._ids

    @property
    def tag_tuples(self) -> list[tuple[str, ...]]:
        """Every record's tags, in order (the list itself: do not change it)."""
        return self._tags

    def lines(self) -> list[int]:
        """Every record's line, in order."""
        return self._lines.tolist()

    def reference_counts(self) -> list[int]:
        """How many references each record has, in order."""
        counts: list[int] = []
        for firsts in self._firsts:
            starts = firsts.tolist()
            counts.extend(map(int.__sub__, starts[1:], starts[:-1]))
        return [pieces - 1 for pieces in counts]

    def references(self, start: int, stop: int) -> list[list[str]]:
        """The references of records ``start`` to ``stop``, a list per record."""
        found: list[list[str]] = []
        for number, low, high in self._spans(start, stop):
            pieces, firsts = self._block(number)
            # a record's references are its pieces after the first (its input)
            after_inputs = [first + 1 for first in firsts[low:high]]
            cuts = map(slice, after_inputs, firsts[low + 1 : high + 1])
            found.extend(map(pieces.__getitem__, cuts))
        return found

    # -- the Sequence --------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> GoldenRecord: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[GoldenRecord, ...]: ...
    def __getitem__(self, index: int | slice) -> GoldenRecord | tuple[GoldenRecord, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return tuple(self[i] for i in range(start, stop, step))
            return tuple(self._records(start, stop))
        count = len(self._ids)
        if not -count <= index < count:
            raise IndexError("golden record index out of range")
        return self._record(index % count)

    def _record(self, at: int) -> GoldenRecord:
        """One record, read from its block's arrays without listing the block."""
        number, index = divmod(at, _BLOCK)
        text, ends, firsts = self._texts[number], self._ends[number], self._firsts[number]
        first, last = firsts[index], firsts[index + 1]
        starts = [ends[first - 1] if first else 0, *ends[first:last]]
        value = self._inputs[at] if at in self._inputs else text[starts[0] : starts[1]]
        references = tuple([text[starts[k] : starts[k + 1]] for k in range(1, last - first)])
        meta = self._metas.get(at, NO_META)
        return quick_record(self._ids[at], value, references, self._tags[at], meta, self._lines[at])

    def __iter__(self) -> Iterator[GoldenRecord]:
        return self._records(0, len(self._ids))

    def _records(self, start: int, stop: int) -> Iterator[GoldenRecord]:
        lines, metas, make = self._lines, self._metas, quick_record
        at = max(start, 0)
        for record_id, value, references, tags in self.fields(start, stop):
            yield make(record_id, value, references, tags, metas.get(at, NO_META), lines[at])
            at += 1

    def fields(self, start: int, stop: int) -> Iterator[RecordFields]:
        """``(id, input, references, tags)`` of records ``start`` to ``stop``, without
        building records (what a record's content hash is made of)."""
        ids, tags, inputs = self._ids, self._tags, self._inputs
        for number, low, high in self._spans(start, stop):
            base = number * _BLOCK
            pieces, firsts = self._block(number)
            for index in range(low, high):
                at = base + index
                first = firsts[index]
                value = inputs[at] if at in inputs else pieces[first]
                yield ids[at], value, tuple(pieces[first + 1 : firsts[index + 1]]), tags[at]

    def _spans(self, start: int, stop: int) -> Iterator[tuple[int, int, int]]:
        """The blocks records ``start`` to ``stop`` are in: each one's number and the
        records' first and past-last positions in it."""
        start, stop = max(start, 0), min(stop, len(self._ids))
        for number in range(start // _BLOCK, (stop - 1) // _BLOCK + 1 if stop > start else 0):
            base = number * _BLOCK
            yield number, max(start - base, 0), min(stop - base, _BLOCK)

    def _block(self, number: int) -> tuple[list[str], list[int]]:
        """A block's pieces, cut out of its text all at once, and where each record's
        pieces start (cutting them one record at a time is twice as slow)."""
        cut = self._cut
        if cut is not None and cut[0] == number:
            return cut[1], cut[2]
        text, ends = self._texts[number], self._ends[number].tolist()
        pieces = list(map(text.__getitem__, map(slice, [0, *ends], ends)))
        firsts = self._firsts[number].tolist()
        self._cut = (number, pieces, firsts)  # one assignment: safe between threads
        return pieces, firsts

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # records are not hashable (their meta)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} records)"


class RecordPacker:
    """Takes a golden set's records in order and packs each block as soon as it is full,
    so that reading a large set never holds more than a block of records as objects
    (records built whole and packed afterwards would leave their ids scattered through
    the memory their texts held, which then could not be given back)."""

    def __init__(self, each_block: Callable[[Sequence[GoldenRecord]], None] | None = None) -> None:
        """``each_block`` (optional) is given each block of records before it is packed."""
        self._each_block = each_block
        self._packed = PackedRecords()
        #: the records taken and not packed yet: a reader appends to it, and calls
        #: :meth:`settle` now and then (a list's own append is the quick way to take them)
        self.pending: list[GoldenRecord] = []
        #: the records kept as they are, once a block could not be packed
        self._plain: list[GoldenRecord] | None = None

    def settle(self) -> None:
        """Pack every full block of the records pending."""
        pending = self.pending
        full = len(pending) - len(pending) % _BLOCK
        for start in range(0, full, _BLOCK):
            self._take(pending[start : start + _BLOCK])
        del pending[:full]

    def _take(self, block: list[GoldenRecord]) -> None:
        if self._each_block is not None:
            self._each_block(block)
        if self._plain is None and self._packed.add_block(block):
            return
        if self._plain is None:
            self._plain = list(self._packed)
        self._plain.extend(block)

    def records(self) -> Sequence[GoldenRecord]:
        """Every record taken: :class:`PackedRecords`, or a tuple when a reference is
        text of another type than str (records made by hand)."""
        self.settle()
        if self.pending:
            self._take(self.pending)
            self.pending.clear()
        return tuple(self._plain) if self._plain is not None else self._packed


def pack_records(records: Iterable[GoldenRecord]) -> Sequence[GoldenRecord]:
    """``records`` packed (see :meth:`RecordPacker.records`)."""
    packer = RecordPacker()
    packer.pending.extend(records)
    return packer.records()


def record_ids(records: Sequence[GoldenRecord]) -> list[str]:
    """Every record's id, in order."""
    if isinstance(records, PackedRecords):
        return list(records.ids)
    return [record.id for record in records]


def reference_counts(records: Sequence[GoldenRecord]) -> list[int]:
    """How many references each record has, in order."""
    if isinstance(records, PackedRecords):
        return records.reference_counts()
    return [len(record.references) for record in records]


def record_tags(records: Sequence[GoldenRecord]) -> list[tuple[str, ...]]:
    """Every record's tags, in order."""
    if isinstance(records, PackedRecords):
        return list(records.tag_tuples)
    return [record.tags for record in records]


def record_lines(records: Sequence[GoldenRecord]) -> list[int]:
    """Every record's line, in order."""
    if isinstance(records, PackedRecords):
        return records.lines()
    return [record.line for record in records]


def record_fields(records: Sequence[GoldenRecord], start: int, stop: int) -> list[RecordFields]:
    """``(id, input, references, tags)`` of records ``start`` to ``stop``."""
    if isinstance(records, PackedRecords):
        return list(records.fields(start, stop))
    return [(r.id, r.input, r.references, r.tags) for r in records[start:stop]]


def record_references(records: Sequence[GoldenRecord], start: int, stop: int) -> list[list[str]]:
    """The references of records ``start`` to ``stop``, a list per record."""
    if isinstance(records, PackedRecords):
        return records.references(start, stop)
    return [list(record.references) for record in records[start:stop]]
