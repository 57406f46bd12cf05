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
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from goldgate.errors import BaselineError, first_of
from goldgate.gate.stats import FloatArray, sample_score
from goldgate.io.atomic import write_text_atomic
from goldgate.io.git import GitFailed as _GitFailed
from goldgate.io.git import git as _git
from goldgate.io.inputs import MAX_NESTING, read_regular
from goldgate.metrics.base import Metric
from goldgate.model.compact_stats import CompactStats, Statistics, as_float
from goldgate.model.goldens import RecordDigests, hex_digests
from goldgate.model.goldens import record_digest as record_digest
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


# -- reading -----------------------------------------------------------------------------------


def parse_baseline(text: str, source: str) -> Baseline:
    """Parse and check a baseline document; ``source`` names it in errors."""
    try:
        # The fast path: pydantic parses and validates in one pass.
        fast = Baseline.model_validate_json(text)
    except ValidationError:
        # The slow path exists to explain what is wrong, naming the line or key.
        return _explain(text, source)
    _check_consistency(fast, source)
    return fast


def _explain(text: str, source: str) -> Baseline:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{source}: damaged baseline: invalid JSON at line {exc.lineno} column {exc.colno}"
            f" ({exc.msg}); restore it from git or run `goldgate bless` again"
        ) from None
    except (RecursionError, ValueError):  # nested too deeply, or a number int() refuses
        raise BaselineError(
            f"{source}: damaged baseline: nested more than {MAX_NESTING} levels deep or"
            " holding a number too long to read; restore it from git"
        ) from None
    if not isinstance(data, dict):
        raise BaselineError(f"{source}: damaged baseline: expected a JSON object")
    version = data.get("schema_version")
    if version not in BASELINE_SCHEMA_VERSIONS:
        raise BaselineError(
            f"{source}: not a goldgate baseline of schema {BASELINE_SCHEMA_VERSION!r} or"
            f" {PACKED_SCHEMA_VERSION!r}"
            f" (schema_version is {version!r}); run `goldgate bless` to write a new one"
        )
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise BaselineError(f"{source}: damaged baseline: {where}: {first['msg']}") from None
    _check_consistency(baseline, source)
    return baseline


def _check_consistency(baseline: Baseline, source: str) -> None:
    packs = any(suite.packed is not None for suite in baseline.suites.values())
    if packs and baseline.schema_version != PACKED_SCHEMA_VERSION:
        raise BaselineError(
            f"{source}: damaged baseline: packed suites need schema_version"
            f" {PACKED_SCHEMA_VERSION!r}, the file says {baseline.schema_version!r}"
        )
    for name, suite in baseline.suites.items():
        chunks = suite.golden_file_chunks
        if chunks is not None and sum(int(c.split(":")[1]) for c in chunks) != suite.n_examples:
            raise BaselineError(
                f"{source}: damaged baseline: suite {name!r}: golden_file_chunks hold another"
                f" number of records than the {suite.n_examples} examples; restore it from git"
                " or run `goldgate bless` again"
            )
        if suite.packed is not None:
            where = f"{source}: damaged baseline: suite {name!r}"
            _check_packed(suite, where)  # each block agrees with itself; then with each other
            if suite.binding is not None and suite.binding != suite.bound():
                raise BaselineError(
                    f"{where}: its golden hash, golden set file hash and index and its packed"
                    " examples do not come from one bless (merged hunk by hunk from two?);"
                    " restore it from git or run `goldgate bless` again"
                )
            continue
        for example_id, example in suite.examples.items():
            where = f"{source}: damaged baseline: suite {name!r}, example {example_id!r}"
            if len(example.outputs) != suite.samples:
                raise BaselineError(
                    f"{where}: {len(example.outputs)} outputs, expected {suite.samples}"
                )
            for spec, metric in suite.metrics.items():
                rows = example.stats.get(spec)
                if rows is None:
                    raise BaselineError(f"{where}: no statistics for metric {spec!r}")
                if len(rows) != suite.samples or any(
                    len(row) != len(metric.stat_names) for row in rows
                ):
                    raise BaselineError(
                        f"{where}: statistics of metric {spec!r} do not have the shape"
                        f" {suite.samples}×{len(metric.stat_names)}"
                    )


def _check_packed(suite: SuiteBaseline, where: str) -> None:
    """Decode a packed suite now, so damage is refused when the file is read, not later."""
    packed = suite.packed
    assert packed is not None
    advice = "; restore it from git or run `goldgate bless` again"
    if suite.examples:
        raise BaselineError(f"{where}: both examples and packed examples{advice}")
    try:
        suite._table()
        limit = outputs_limit(packed.n, suite.samples)
        unpack_bytes(packed.outputs.data, packed.outputs.sha256, "outputs", limit=limit)
    except PackError as exc:
        raise BaselineError(f"{where}: {exc}{advice}") from None


def read_baseline(path: Path) -> Baseline:
    """Read a baseline file; ``BaselineError`` naming the file when missing or damaged."""
    try:
        raw = read_regular(path, BaselineError, what="baseline")
    except FileNotFoundError:
        raise BaselineError(f"{path}: no baseline; run `goldgate bless` to create it") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BaselineError(f"{path}: damaged baseline: not UTF-8 (byte {exc.start})") from None
    return parse_baseline(text, str(path))


def read_baseline_at_ref(path: Path, ref: str, root: Path) -> Baseline | None:
    """Read the baseline as it is at git revision ``ref``; None when the file is not there.

    ``path`` is resolved against ``root`` (a directory inside the git work tree). An unknown
    revision or a missing git is a ``BaselineError``.
    """
    full = path if path.is_absolute() else root / path
    try:
        toplevel = _git(root, "rev-parse", "--show-toplevel").strip()
        commit = _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except _GitFailed as exc:
        raise BaselineError(f"--baseline-ref {ref}: {exc}") from None
    try:
        relative = full.resolve().relative_to(Path(toplevel).resolve()).as_posix()
    except ValueError:
        raise BaselineError(
            f"{full}: the baseline is outside the git work tree {toplevel}"
        ) from None
    source = f"{ref}:{relative}"
    try:
        _git(root, "cat-file", "-e", f"{commit}:{relative}")
    except _GitFailed:
        return None
    try:
        text = _git(root, "show", f"{commit}:{relative}")
    except _GitFailed as exc:
        raise BaselineError(f"{source}: {exc}") from None
    return parse_baseline(text, source)


# -- writing -----------------------------------------------------------------------------------


def dumps_baseline(baseline: Baseline) -> str:
    """The file's text: sorted keys, indented objects, one-line lists of scalars.

    Schema 1 unless a suite is packed; a suite has either ``examples`` or ``packed``.
    """
    document = baseline.model_dump(mode="json")
    packs = False
    for suite in document["suites"].values():
        if suite.get("forced") is None:  # only a forced bless shows up in the file's diff
            suite.pop("forced", None)
        for key in ("golden_file_hash", "golden_file_chunks", "binding"):
            if suite.get(key) is None:  # a set of many files, a cut-down one, a small one
                suite.pop(key, None)
        if suite["packed"] is None:
            del suite["packed"]
        else:
            packs = True
            del suite["examples"]
    document["schema_version"] = PACKED_SCHEMA_VERSION if packs else BASELINE_SCHEMA_VERSION
    return _dump(document, 0) + "\n"


def _dump(value: Any, level: int) -> str:
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        pad = "  " * (level + 1)
        items = [
            f"{pad}{json.dumps(key, ensure_ascii=False)}: {_dump(value[key], level + 1)}"
            for key in sorted(value)
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(value, list) and any(isinstance(item, Mapping) for item in value):
        pad = "  " * (level + 1)
        items = [pad + _dump(item, level + 1) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def write_baseline(path: Path, baseline: Baseline) -> None:
    """Write the baseline atomically: a temporary file beside it, fsync, then os.replace."""
    text = dumps_baseline(baseline)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, text, newline="\n")
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write the baseline: {exc.strerror or exc}") from None


# -- comparing with today's golden set and metrics ---------------------------------------------


def verify_suite(
    suite_baseline: SuiteBaseline,
    *,
    suite: str,
    golden_hash: str,
    signatures: Mapping[str, str],
    source: str,
    digests: Mapping[str, str] | None = None,
) -> None:
    """Refuse a suite baseline whose golden hash or a metric's signature differs from today's.

    ``digests`` (id → ``record_digest``) lets the message say which examples were added,
    removed or changed.
    """
    if suite_baseline.golden_hash != golden_hash:
        detail = ""
        only_added = False
        if digests is not None:
            detail, only_added = _golden_changes(suite_baseline, digests)
        advice = (
            "run `goldgate bless --new-only` to add the new examples (or `goldgate bless` to"
            " accept every score again)"
            if only_added
            else "run `goldgate bless` to accept every score again"
        )
        raise BaselineError(
            f"{source}: suite {suite!r}: the golden set changed since the baseline was blessed"
            f" (baseline {_short_hash(suite_baseline.golden_hash)}, now {_short_hash(golden_hash)})"
            f"{detail}; {advice}"
        )
    if digests is not None:
        _check_examples_match(suite_baseline, suite, digests, source)
    for spec, signature in signatures.items():
        blessed = suite_baseline.metrics.get(spec)
        if blessed is not None and blessed.signature != signature:
            raise BaselineError(
                f"{source}: suite {suite!r}, metric {spec!r}: the signature differs from the"
                f" baseline's (baseline {blessed.signature}, now {signature}); scores are only"
                " compared under the same settings; run `goldgate bless` to accept the new ones"
            )


def verify_scores(
    suite_baseline: SuiteBaseline,
    metrics: Mapping[str, Metric[Any]],
    *,
    signatures: Mapping[str, str],
    suite: str,
    source: str,
) -> None:
    """Recompute each blessed score that today's metric can (same signature, less ``nrefs``)
    from the blessed statistics; a stored score they do not give is a damaged baseline."""
    for spec, metric in metrics.items():
        blessed = suite_baseline.metrics.get(spec)
        if blessed is not None and strip_nrefs(blessed.signature) == strip_nrefs(
            signatures.get(spec, "")
        ):
            verify_score(suite_baseline, spec, metric, suite=suite, source=source)


#: How far a stored score may lie from the one its statistics give: float noise from adding
#: them up in another order (the file keeps examples sorted by id), nothing a person types.
SCORE_TOLERANCE = 1e-6


def verify_score(
    suite_baseline: SuiteBaseline, spec: str, metric: Metric[Any], *, suite: str, source: str
) -> None:
    """Refuse a blessed score that does not follow from the blessed per-example statistics.

    The gate compares today's statistics with the blessed ones example by example, and the
    reports show the blessed score: an edited score, or statistics zeroed to turn a drop into
    an "improvement", must not be believed.
    """
    blessed = suite_baseline.metrics[spec]
    ids = suite_baseline.example_ids()
    with np.errstate(over="ignore", invalid="ignore"):
        recomputed = sample_score(metric, suite_baseline.compact_stats(spec, ids)) if ids else None
    if recomputed is None:
        return
    if not math.isfinite(recomputed) or not math.isclose(
        blessed.score, recomputed, rel_tol=SCORE_TOLERANCE, abs_tol=SCORE_TOLERANCE
    ):
        raise BaselineError(
            f"{source}: damaged baseline: suite {suite!r}, metric {spec!r}: the stored score"
            f" {blessed.score!r} does not follow from the stored per-example statistics (they"
            f" give {recomputed!r}); restore the file from git or run `goldgate bless` again"
        )


def _check_examples_match(
    suite_baseline: SuiteBaseline, suite: str, digests: Mapping[str, str], source: str
) -> None:
    # Only a hand edit or a bad merge gets here: the hash says the goldens are the same, yet
    # the examples differ, and the gate would silently pair a subset of them.
    if isinstance(digests, RecordDigests) and suite_baseline.same_digests(digests):
        return
    blessed = suite_baseline.digests()
    if blessed == digests:
        return
    problems = [f"example {i} is missing" for i in digests if i not in blessed]
    problems += [f"example {i} is not in the golden set" for i in blessed if i not in digests]
    problems += [
        f"example {i} has another digest"
        for i, digest in digests.items()
        if i in blessed and blessed[i] != digest
    ]
    shown = first_of(problems, 3)
    raise BaselineError(
        f"{source}: damaged baseline: suite {suite!r}: its golden hash matches the golden set"
        f" but its examples do not ({shown}); restore it from git or run `goldgate bless` again"
    )


def _short_hash(value: str) -> str:
    return value[:19] + "…" if len(value) > 20 else value


def _golden_changes(suite_baseline: SuiteBaseline, digests: Mapping[str, str]) -> tuple[str, bool]:
    blessed = suite_baseline.digests()
    added = [i for i in digests if i not in blessed]
    removed = [i for i in blessed if i not in digests]
    changed = [i for i in digests if i in blessed and blessed[i] != digests[i]]
    parts = []
    for label, ids in (("added", added), ("removed", removed), ("changed", changed)):
        if ids:
            parts.append(f"{len(ids)} {label}: {first_of(ids, 5)}")
    detail = f": {'; '.join(parts)}" if parts else ""
    return detail, bool(added) and not changed
