"""The blessed baseline: versioned JSON, written atomically, read back strictly.

Per suite it holds the golden set's content hash, each metric's signature, score and
statistic names, and per example (keyed by id) a digest of the example, its outputs and its
additive statistics per metric and sample. Paired tests, flips and diffs need nothing else.

A suite of :data:`PACK_MIN_EXAMPLES` examples or more is written compactly instead (schema
``goldgate.baseline/2``): its scores, signatures, components and hashes stay readable JSON,
and its ids, digests, outputs and statistics are packed blocks (see :mod:`goldgate.model.packed`),
statistics as integers where they are integers. Files of schema 1 are read as before.

The file is stable: keys are sorted, numbers are written as Python's shortest round-trip
repr and nothing in it depends on the time, so blessing the same run twice gives the same
bytes. Lists of numbers stay on one line, so a re-bless shows up in a diff as one line per
changed example and metric.

Reading and writing the file is :mod:`goldgate.model.baseline_io`'s; checking a baseline
against today's golden set and metrics is :mod:`goldgate.model.baseline_verify`'s.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from goldgate.errors import BaselineError
from goldgate.gate.stats import FloatArray
from goldgate.model.compact_stats import CompactStats, Statistics, as_float
from goldgate.model.golden_hashing import RecordDigests, hex_digests
from goldgate.model.packed import (
    ColumnType,
    PackError,
    json_bytes,
    pack_bytes,
    pack_column_list,
    pack_columns,
    unpack_bytes,
    unpack_json,
    unpack_typed_columns,
)

BASELINE_SCHEMA_VERSION: Literal["goldgate.baseline/1"] = "goldgate.baseline/1"
#: The schema of a file with at least one packed suite.
PACKED_SCHEMA_VERSION: Literal["goldgate.baseline/2"] = "goldgate.baseline/2"
BASELINE_SCHEMA_VERSIONS = (BASELINE_SCHEMA_VERSION, PACKED_SCHEMA_VERSION)
#: Suites with at least this many examples are packed: below it, a per-example JSON diff is
#: worth its size (about 300 bytes per example instead of about 40).
PACK_MIN_EXAMPLES = 5_000
#: The most a packed suite's ids block may inflate to, per example (its JSON: an id with its
#: quotes and comma). Ids are short; this is generous, and bounds what a tampered block (a
#: zlib bomb) costs before it is refused. Bless refuses a suite beyond it, so a baseline it
#: writes is always read back.
IDS_BYTES_PER_EXAMPLE = 4 << 10
#: The most a packed suite's outputs block may inflate to, per output (one per example and
#: sample): sixteen thousand tokens or so of text each, on average.
OUTPUT_BYTES_PER_SAMPLE = 64 << 10
#: Whatever the example count says, no ids or outputs block inflates past this.
MAX_BLOCK_BYTES = 4 << 30


def ids_limit(n: int) -> int:
    """The most the ids block of ``n`` examples may inflate to."""
    return min(2 + n * IDS_BYTES_PER_EXAMPLE, MAX_BLOCK_BYTES)


def outputs_limit(n: int, samples: int) -> int:
    """The most the outputs block of ``n`` examples of ``samples`` outputs may inflate to."""
    return min(2 + n * (samples * OUTPUT_BYTES_PER_SAMPLE + 3), MAX_BLOCK_BYTES)


class _Model(BaseModel):
    # Python's json reads NaN and Infinity; blessing never writes them (allow_nan=False), so
    # one in the file is damage, and it would crash the gate's arithmetic.
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class BaselineMetric(_Model):
    """A metric as blessed: its signature, corpus score and the names of its statistics."""

    signature: str
    score: float
    stat_names: list[str]
    components: dict[str, Any] = Field(default_factory=dict)


class BaselineExample(_Model):
    """One blessed example: a digest of its golden record, its outputs and statistics."""

    digest: str = Field(description="hash of the record's input, references and tags")
    outputs: list[str]
    #: metric spec -> one row of additive statistics per sample
    stats: dict[str, list[list[float]]]


class PackedBlock(_Model):
    """Bytes compressed with zlib, as base64, with the SHA-256 of the uncompressed bytes."""

    sha256: str
    data: str


class PackedStats(PackedBlock):
    """One metric's statistics: ``samples × k`` columns (sample-major), one type each."""

    columns: list[ColumnType]


class PackedCategories(PackedBlock):
    """The failure modes of each blessed output (its first sample), found at bless time: one
    little-endian 8-byte mask an example (bit i: ``detectors[i]`` present), so that a run on
    a fresh checkout takes the blessed side's categories from here instead of diagnosing a
    million blessed outputs again. Valid only for the same detectors and golden set."""

    #: each detector's identity (class, name, version, settings), in bit order
    detectors: list[str]
    #: the golden set's content hash the masks were found against
    golden_hash: str

    def masks(self, n: int, detectors: Sequence[str], golden_hash: str) -> bytes | None:
        """The ``n`` masks' raw bytes when they were found by these detectors against this
        golden set; None when they were not (or are damaged: then a run diagnoses afresh)."""
        if self.detectors != list(detectors) or self.golden_hash != golden_hash:
            return None
        try:
            raw = unpack_bytes(self.data, self.sha256, "categories", size=8 * n)
        except PackError:
            return None
        return raw if len(raw) == 8 * n else None


class PackedExamples(_Model):
    """A large suite's examples, packed; aligned by position with ``ids``."""

    n: int = Field(ge=0)
    #: a JSON list of the ids, in golden order
    ids: PackedBlock
    #: each example's 16-hex-digit digest as 8 raw bytes
    digests: PackedBlock
    #: a JSON list of each example's outputs (one per sample)
    outputs: PackedBlock
    stats: dict[str, PackedStats]
    #: the blessed outputs' failure modes (absent with ``diagnose: off``, or after a
    #: ``bless --new-only``, whose added examples were not diagnosed)
    categories: PackedCategories | None = None


#: ids a :class:`BlessedOutputs` finds out of order by a scan before it builds its table
_SCANS_BEFORE_TABLE = 16


class BlessedOutputs:
    """id → a packed suite's blessed outputs (one per sample), None for an id not blessed.

    All a report needs of a baseline once the gate is done: it holds the packed outputs and
    the ids, not the statistics, so the rest of a million-example baseline can be let go.
    The outputs are decoded on the first lookup; ids asked for in blessed order (the reports
    go through the golden set, usually in that order) are found without a table of positions.
    """

    def __init__(self, ids: list[str], block: PackedBlock, *, samples: int) -> None:
        self.ids = ids
        self._block = block
        self._samples = samples
        self._outputs: list[list[str]] | None = None
        self._next = 0  # where the next id asked for is likely to be
        self._scans = 0  # ids found out of order by a scan of ``ids``

    @functools.cached_property
    def position(self) -> dict[str, int]:
        """id → its index in ``ids``."""
        return dict(zip(self.ids, range(len(self.ids)), strict=True))

    def _find(self, example_id: str) -> int | None:
        """Where ``example_id`` is; the first few found out of order (the examples edited or
        removed since the baseline) by a scan, not a table of a million positions."""
        if "position" not in vars(self) and self._scans < _SCANS_BEFORE_TABLE:
            self._scans += 1
            try:
                return self.ids.index(example_id)
            except ValueError:
                return None
        return self.position.get(example_id)

    def release(self) -> None:
        """Let the decoded outputs go (decoded again on the next lookup): after the few asked
        for the examples edited or removed, the reports ask for every one, but only once the
        history is written, which need not hold them meanwhile (170 MB at a million)."""
        self._outputs = None

    def adopt(self, ids: list[str]) -> None:
        """Share ``ids``, equal to this suite's ids, instead of a copy of every string."""
        if ids == self.ids:
            self.ids = ids

    def __call__(self, example_id: str) -> list[str] | None:
        at = self._next
        if not (at < len(self.ids) and self.ids[at] == example_id):
            found = self._find(example_id)
            if found is None:
                return None
            at = found
        self._next = at + 1
        if self._outputs is None:
            try:
                self._outputs = _decode_outputs(self._block, len(self.ids), self._samples)
            except PackError as exc:
                raise BaselineError(f"damaged baseline: {exc}") from None
        return self._outputs[at]


@dataclass
class _Table:
    """A packed suite, decoded: ids, digests, statistics arrays and blessed outputs."""

    #: each example's digest as 8 raw bytes, in the order of the ids
    digest_bytes: bytes
    stats: dict[str, CompactStats]  # spec -> (samples, n, k)
    outputs: BlessedOutputs

    @property
    def ids(self) -> list[str]:
        return self.outputs.ids

    @property
    def position(self) -> dict[str, int]:
        """id → its index in ``ids`` (built on first use: a million entries)."""
        return self.outputs.position

    @functools.cached_property
    def digests(self) -> list[str]:
        """Each example's digest as 16 hex digits, in the order of ``ids``."""
        return hex_digests(self.digest_bytes)


# Decoded tables live beside the models, not in them: pydantic compares private attributes
# in ==, and a baseline read back must equal the one written, decoded or not.
_TABLES: dict[int, _Table] = {}


def packs(examples: int) -> bool:
    """Whether a suite of this many examples is blessed packed (by default)."""
    return examples >= PACK_MIN_EXAMPLES


#: a piece of ``golden_file_chunks``: ``length:records:bytes-sha256:records-sha256``
CHUNK_PATTERN = r"^[0-9]{1,15}:[0-9]{1,15}:[0-9a-f]{64}:[0-9a-f]{64}$"


class SuiteBaseline(_Model):
    """One suite as blessed: ``examples`` by id, or (a large suite) ``packed``."""

    golden_hash: str
    goldens: str
    golden_file_hash: str | None = Field(
        default=None,
        pattern=r"^sha256:[0-9a-f]{64}$",
        description="SHA-256 of the golden set file's bytes as blessed (one local file):"
        " `check` takes an unchanged file for the blessed set without reading its records",
    )
    golden_file_chunks: list[Annotated[str, StringConstraints(pattern=CHUNK_PATTERN)]] | None = (
        Field(
            default=None,
            description="the golden set file (one JSON Lines file of a packed suite) as blessed,"
            " in pieces of about a mebibyte cut at newlines, each `length:records:bytes-sha256:"
            "records-sha256`: `check` tells the blessed records in other bytes by reading only"
            " the region that changed",
        )
    )
    binding: str | None = Field(
        default=None,
        pattern=r"^sha256:[0-9a-f]{64}$",
        description="a packed suite's golden hash, golden set file hash and index, and the"
        " SHA-256 of each packed block, hashed together at bless time: parts of two blesses"
        " merged hunk by hunk do not agree with it (absent in baselines from before it)",
    )
    samples: int = Field(ge=1)
    metrics: dict[str, BaselineMetric]
    examples: dict[str, BaselineExample] = Field(default_factory=dict)
    packed: PackedExamples | None = None
    forced: list[str] | None = Field(
        default=None,
        description="gate checks that failed when this suite was blessed with"
        " --allow-regression (absent when none did)",
    )

    # -- one view of both layouts -------------------------------------------------------------
    def _table(self) -> _Table | None:
        if self.packed is None:
            return None
        table = _TABLES.get(id(self))
        if table is None:
            table = _TABLES[id(self)] = _decode_table(self)
            weakref.finalize(self, _TABLES.pop, id(self), None)
        return table

    @property
    def n_examples(self) -> int:
        """How many examples were blessed."""
        return self.packed.n if self.packed is not None else len(self.examples)

    def example_ids(self) -> list[str]:
        """The blessed ids (golden order when packed, file order otherwise)."""
        table = self._table()
        return list(table.ids) if table is not None else list(self.examples)

    def has_example(self, example_id: str) -> bool:
        """Whether ``example_id`` was blessed."""
        table = self._table()
        return example_id in (table.position if table is not None else self.examples)

    def same_digests(self, digests: RecordDigests) -> bool:
        """Whether the blessed ids and digests are ``digests``, in the same order (packed
        suites only: a quick test; False says nothing). When they are, the suite shares the
        golden set's id strings from then on instead of holding its own."""
        table = self._table()
        if table is None or table.digest_bytes != digests.raw or table.ids != digests.ids:
            return False
        table.outputs.adopt(digests.ids)
        return True

    def digest_bytes(self) -> bytes | None:
        """Each blessed example's digest as 8 raw bytes, in the order of ``example_ids``
        (packed suites only; None otherwise)."""
        table = self._table()
        return table.digest_bytes if table is not None else None

    def positions_of(self, ids: Sequence[str]) -> npt.NDArray[np.intp]:
        """Each of ``ids``' index among the blessed examples, -1 where it is not blessed."""
        table = self._table()
        position: Mapping[str, int]
        if table is not None:
            if len(ids) == len(table.ids) and list(ids) == table.ids:
                return np.arange(len(ids), dtype=np.intp)  # no table of positions to build
            position = table.position
        else:
            position = {example_id: index for index, example_id in enumerate(self.examples)}
        return np.fromiter((position.get(i, -1) for i in ids), dtype=np.intp, count=len(ids))

    def blessed_outputs(self) -> Callable[[str], list[str] | None]:
        """id → its blessed outputs (None when not blessed), holding no more of the baseline
        than the outputs and ids."""
        table = self._table()
        if table is not None:
            return table.outputs
        examples = self.examples

        def outputs_of(example_id: str) -> list[str] | None:
            example = examples.get(example_id)
            return example.outputs if example is not None else None

        return outputs_of

    def digests(self) -> dict[str, str]:
        """id → digest of every blessed example."""
        table = self._table()
        if table is not None:
            return dict(zip(table.ids, table.digests, strict=True))
        return {example_id: example.digest for example_id, example in self.examples.items()}

    def outputs_of(self, example_id: str) -> list[str] | None:
        """The blessed outputs of an example (one per sample), None when not blessed."""
        return self.blessed_outputs()(example_id)

    def stats_array(
        self, spec: str, ids: Sequence[str], *, at: npt.NDArray[np.intp] | None = None
    ) -> FloatArray:
        """The statistics of ``spec`` for ``ids`` as a ``(samples, n, k)`` float64 array
        (``at``: as for :meth:`compact_stats`)."""
        return as_float(self.compact_stats(spec, ids, at=at))

    def compact_stats(
        self, spec: str, ids: Sequence[str], *, at: npt.NDArray[np.intp] | None = None
    ) -> Statistics:
        """The statistics of ``spec`` for ``ids``: compact when packed, else float64.

        ``at``: the ids' positions as :meth:`positions_of` gave them, if known; a packed
        suite then needs no table of a million positions to find them.
        """
        width = len(self.metrics[spec].stat_names)
        if not ids:
            return np.zeros((self.samples, 0, width), dtype=np.float64)
        table = self._table()
        if table is not None:
            full = table.stats[spec]
            if at is not None:
                positions = at
                if len(at) == full.n and np.array_equal(at, np.arange(full.n)):
                    return full
            elif len(ids) == len(table.ids) and list(ids) == table.ids:
                return full
            else:
                positions = np.fromiter((table.position[i] for i in ids), dtype=np.intp)
            # Views of the decoded columns where that keeps a copy's numbers: always with one
            # sample (a run against a baseline after a few golden records were edited pairs
            # all the others); with several, a run's view would keep the columns' memory
            # order, and a sum over samples and examples would round differently.
            return full.take(positions, view=full.samples == 1)
        rows = [self.examples[example_id].stats[spec] for example_id in ids]
        return (
            np.asarray(rows, dtype=np.float64)
            .reshape(len(ids), self.samples, width)
            .transpose(1, 0, 2)
        )

    def bound(self) -> str | None:
        """The ``binding`` this packed suite's parts give (None when not packed)."""
        packed = self.packed
        if packed is None:
            return None
        parts = {
            "golden_hash": self.golden_hash,
            "goldens": self.goldens,
            "golden_file_hash": self.golden_file_hash,
            "golden_file_chunks": self.golden_file_chunks,
            "samples": self.samples,
            "n": packed.n,
            "ids": packed.ids.sha256,
            "digests": packed.digests.sha256,
            "outputs": packed.outputs.sha256,
            "stats": {spec: [b.sha256, b.columns] for spec, b in sorted(packed.stats.items())},
        }
        text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()

    def check_outputs(self) -> None:
        """Decode a packed suite's blessed outputs once, so a block of the wrong number of
        examples or samples is refused (``PackError``) by ``check`` as by a run's reports."""
        if self.packed is not None:
            _decode_outputs(self.packed.outputs, self.packed.n, self.samples)

    # -- building ------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        *,
        golden_hash: str,
        goldens: str,
        samples: int,
        metrics: dict[str, BaselineMetric],
        ids: Sequence[str],
        digests: Sequence[str],
        outputs: Sequence[Sequence[str]],
        stats: Mapping[str, Statistics],
        packed: bool | None = None,
        golden_file_hash: str | None = None,
        golden_file_chunks: list[str] | None = None,
    ) -> SuiteBaseline:
        """A suite baseline from aligned per-example data; ``stats`` are ``(samples, n, k)``.

        ``packed`` chooses the layout; by default suites of ``PACK_MIN_EXAMPLES`` or more
        examples are packed.
        """
        if packed is None:
            packed = packs(len(ids))
        if packed:
            suite = cls(
                golden_hash=golden_hash,
                goldens=goldens,
                golden_file_hash=golden_file_hash,
                golden_file_chunks=golden_file_chunks,
                samples=samples,
                metrics=metrics,
                packed=_encode_examples(ids, digests, outputs, stats, samples=samples),
            )
            suite.binding = suite.bound()
            return suite
        rows = {spec: as_float(array).transpose(1, 0, 2).tolist() for spec, array in stats.items()}
        examples = {
            example_id: BaselineExample(
                digest=digests[index],
                outputs=list(outputs[index]),
                stats={spec: rows[spec][index] for spec in rows},
            )
            for index, example_id in enumerate(ids)
        }
        return cls(
            golden_hash=golden_hash,
            goldens=goldens,
            golden_file_hash=golden_file_hash,
            samples=samples,
            metrics=metrics,
            examples=examples,
        )


def _encode_examples(
    ids: Sequence[str],
    digests: Sequence[str],
    outputs: Sequence[Sequence[str]],
    stats: Mapping[str, Statistics],
    *,
    samples: int,
) -> PackedExamples:
    ids_raw = json_bytes(list(ids))
    outputs_raw = json_bytes([list(texts) for texts in outputs])
    # what reading refuses (a tampered block inflating past it), blessing never writes
    for what, raw, most in (
        ("ids", ids_raw, ids_limit(len(ids))),
        ("outputs", outputs_raw, outputs_limit(len(ids), samples)),
    ):
        if len(raw) > most:
            raise BaselineError(
                f"cannot pack a baseline whose {what} take {len(raw):,} bytes, more than the"
                f" {most:,} that {len(ids):,} examples may ({what} this long are not blessed)"
            )
    try:
        digest_bytes = b"".join(bytes.fromhex(digest) for digest in digests)
    except ValueError:
        raise BaselineError("cannot pack a baseline whose digests are not hexadecimal") from None
    if len(digest_bytes) != 8 * len(ids):
        raise BaselineError("cannot pack a baseline whose digests are not 16 hex digits")
    packed_stats = {}
    for spec, array in stats.items():
        if isinstance(array, CompactStats):  # one column at a time, never all as float64
            columns, sha256, data = pack_column_list(array.columns)
        else:
            samples, n, k = array.shape
            columns, sha256, data = pack_columns(array.transpose(1, 0, 2).reshape(n, samples * k))
        packed_stats[spec] = PackedStats(columns=columns, sha256=sha256, data=data)
    return PackedExamples(
        n=len(ids),
        ids=_block(pack_bytes(ids_raw)),
        digests=_block(pack_bytes(digest_bytes)),
        outputs=_block(pack_bytes(outputs_raw)),
        stats=packed_stats,
    )


def _block(packed: tuple[str, str]) -> PackedBlock:
    return PackedBlock(sha256=packed[0], data=packed[1])


def _decode_table(suite: SuiteBaseline) -> _Table:
    packed = suite.packed
    assert packed is not None
    n = packed.n
    ids = unpack_json(packed.ids.data, packed.ids.sha256, "ids", limit=ids_limit(n))
    # (set(map(type, ...)) and dict(zip(...)) iterate in C: a million ids in milliseconds)
    if not isinstance(ids, list) or len(ids) != n or not set(map(type, ids)) <= {str}:
        raise PackError(f"ids: expected a list of {n} strings")
    if len(set(ids)) != n:
        raise PackError("ids: an id appears twice")
    raw = unpack_bytes(packed.digests.data, packed.digests.sha256, "digests", size=8 * n)
    if len(raw) != 8 * n:
        raise PackError(f"digests: {len(raw)} bytes, expected {8 * n}")
    stats = {}
    for spec, block in packed.stats.items():
        metric = suite.metrics.get(spec)
        if metric is None:
            raise PackError(f"statistics of {spec!r}: not a metric of the suite")
        width = len(metric.stat_names)
        if len(block.columns) != suite.samples * width:
            raise PackError(
                f"statistics of {spec!r}: {len(block.columns)} columns, expected"
                f" {suite.samples}×{width}"
            )
        # the packed columns are already in the smallest exact types, in CompactStats' order
        columns = unpack_typed_columns(
            block.columns, n, block.data, block.sha256, f"statistics of {spec!r}"
        )
        stats[spec] = CompactStats(suite.samples, n, width, tuple(columns))
    missing = [spec for spec in suite.metrics if spec not in stats]
    if missing:
        raise PackError(f"no statistics for metric {missing[0]!r}")
    return _Table(
        digest_bytes=raw,
        stats=stats,
        outputs=BlessedOutputs(ids, packed.outputs, samples=suite.samples),
    )


def _decode_outputs(block: PackedBlock, n: int, samples: int) -> list[list[str]]:
    """A packed suite's blessed outputs: ``n`` lists of ``samples`` strings, else
    ``PackError`` (the block inflated no further than that many outputs may take)."""
    outputs = unpack_json(block.data, block.sha256, "outputs", limit=outputs_limit(n, samples))
    # each example's a list of ``samples`` strings (what the reports index and slice), tested
    # by maps that iterate in C: a million lists in milliseconds
    if (
        not isinstance(outputs, list)
        or len(outputs) != n
        or not set(map(type, outputs)) <= {list}
        or set(map(len, outputs)) - {samples}
        or not set(map(type, itertools.chain.from_iterable(outputs))) <= {str}
    ):
        raise PackError(
            f"outputs: expected a list of {n} lists of {samples} output{'s' * (samples != 1)}"
            " (strings)"
        )
    return outputs


class Baseline(_Model):
    """The whole baseline file."""

    schema_version: Literal["goldgate.baseline/1", "goldgate.baseline/2"] = BASELINE_SCHEMA_VERSION
    goldgate_version: str
    suites: dict[str, SuiteBaseline]


def strip_nrefs(signature: str) -> str:
    """A signature without its ``nrefs`` field, which depends on the whole set, not an example."""
    return "|".join(part for part in signature.split("|") if not part.startswith("nrefs:"))


def blessed_nrefs(suite_baseline: SuiteBaseline) -> str | None:
    """The ``nrefs`` field the blessed signatures agree on (it comes from the golden set
    alone), or None when they do not."""
    labels = {
        part.removeprefix("nrefs:")
        for metric in suite_baseline.metrics.values()
        for part in metric.signature.split("|")
        if part.startswith("nrefs:")
    }
    return labels.pop() if len(labels) == 1 else None
