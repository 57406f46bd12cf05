"""The result of a gate run: the one document every report and face reads.

It is decided completely before anything is rendered; reporters only display it. Written to
disk as versioned JSON (``schema_version``) and read back by ``goldgate report``.
"""

from __future__ import annotations

import gzip
import json
import math
import zlib
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Annotated, Any, Protocol, Self, overload

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema, to_json

from goldgate.model.golden_records import PackedRecords

#: /2: per-example rows may live in a side file (``examples_file``), not inline
RESULT_SCHEMA_VERSION = "goldgate.result/2"
#: the side file of per-example rows written beside result.json
EXAMPLES_FILE = "examples.jsonl.gz"
#: The most one row of the examples file may inflate to (a row holds an example's input,
#: references, output and blessed output): generous, and what a gzip bomb of one long line
#: costs before it is refused.
MAX_EXAMPLE_ROW_BYTES = 16 << 20
#: The most the whole examples file may inflate to, whatever the result's example count says.
MAX_EXAMPLES_BYTES = 4 << 30
#: example rows dumped before they are handed to the compressor
_ROWS_PER_BATCH = 1024
#: batches of rows waiting for a compressor in its own thread (~0.5 MB each at most)
_QUEUED_BATCHES = 8


class Verdict(StrEnum):
    """The outcome of a run (and of each suite)."""

    PASS = "pass"
    REGRESSED = "regressed"
    IMPROVED = "improved"
    ERROR = "error"

    @property
    def exit_code(self) -> int:
        """0 pass or improved, 1 regressed, 2 error."""
        return {"pass": 0, "improved": 0, "regressed": 1, "error": 2}[self.value]


class CheckStatus(StrEnum):
    """The outcome of one gate check."""

    PASS = "pass"
    FAIL = "fail"
    #: beyond tolerance but not statistically significant: forgiven as noise
    FORGIVEN = "forgiven"
    IMPROVED = "improved"
    #: could not be evaluated (no baseline yet for a baseline-relative rule)
    SKIPPED = "skipped"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Interval(_Model):
    """A confidence interval of a delta, in points."""

    low: float
    high: float
    level: float = Field(description="confidence level, e.g. 0.95")


class MetricCalls(_Model):
    """What a metric that calls a service (``llm_judge``) did in this run, apart from its score.

    The score's components (tokens, cost) describe judging the whole set, judgments taken
    from the cache included; these counts say what this run itself asked for.
    """

    requests: int = Field(description="requests sent in this run, retries included")
    retries: int = Field(description="requests that repeated a failed or unreadable one")
    cached: int = Field(description="judgments served from the cache (nothing sent)")


class MetricSummary(_Model):
    """One metric of one suite (or one tag slice): baseline, current and their difference."""

    metric: str
    signature: str
    higher_is_better: bool = Field(
        default=True, description="the metric's direction: false for an error rate such as TER"
    )
    current: float
    current_shared: float | None = Field(
        default=None,
        description="the current score on the examples shared with the baseline, which"
        " `delta` compares with `baseline`, when the golden set changed (`current` is on the"
        " whole set)",
    )
    baseline: float | None = None
    delta: float | None = None
    interval: Interval | None = None
    p_value: float | None = None
    components: dict[str, Any] = Field(default_factory=dict)
    baseline_components: dict[str, Any] = Field(default_factory=dict)
    trend: list[float] = Field(
        default_factory=list,
        description="a gated metric's blessed score at its last blesses, oldest first (git)",
    )
    calls: MetricCalls | None = Field(
        default=None,
        description="this run's requests, retries and cache hits, for a metric that calls a"
        " service (llm_judge); on the suite's summary only, not its slices",
    )

    @property
    def label(self) -> str:
        """The metric's name for a table, saying so when lower is better (``ter (lower is
        better)``), so that a positive delta is not read as good news."""
        return self.metric if self.higher_is_better else f"{self.metric} (lower is better)"

    def current_text(self, fmt: Callable[[float], str]) -> str:
        """``current`` for a table, with the score on the shared examples beside it when the
        golden set changed (the delta is theirs: whole-set score + delta is not the baseline)."""
        if self.current_shared is None:
            return fmt(self.current)
        return f"{fmt(self.current)} (shared {fmt(self.current_shared)})"


def gain(delta: float, higher_is_better: bool) -> float:
    """A delta turned so that positive is better and negative is worse, whatever the direction."""
    return delta if higher_is_better else -delta


class CheckResult(_Model):
    """One gate rule applied to one metric of one suite (optionally one tag slice)."""

    suite: str
    metric: str
    rule: str = Field(
        description="min | max | max_drop | max_drop_rel | max_flips | max_drift | max_drift_rel"
    )
    threshold: float
    status: CheckStatus
    message: str
    slice: str | None = Field(default=None, description="tag of the slice, None for the suite")
    higher_is_better: bool = Field(
        default=True, description="the metric's direction: false for an error rate such as TER"
    )
    current: float | None = None
    baseline: float | None = None
    delta: float | None = None
    interval: Interval | None = None
    p_value: float | None = None
    flips: int | None = None

    @property
    def id(self) -> str:
        """A stable, readable identifier such as ``qa::exact_match::max_drop``."""
        parts = [self.suite, self.metric, self.rule]
        if self.slice:
            parts.insert(2, f"tag={self.slice}")
        return "::".join(parts)


class SliceResult(_Model):
    """A tag slice of a suite: the examples carrying the tag, scored alone."""

    tag: str
    n_examples: int
    metrics: list[MetricSummary]


class ExampleResult(_Model):
    """One golden example: its texts and per-example scores now and at the baseline."""

    id: str
    line: int | None = Field(default=None, description="line of the golden file (1-based)")
    tags: list[str] = Field(default_factory=list)
    input: Any = None
    references: list[str]
    output: str
    baseline_output: str | None = None
    scores: dict[str, float] = Field(default_factory=dict)
    baseline_scores: dict[str, float] = Field(default_factory=dict)
    #: metrics (binary ones, such as exact match) that went from correct to wrong
    flipped_to_wrong: list[str] = Field(default_factory=list)
    flipped_to_right: list[str] = Field(default_factory=list)
    new: bool = Field(default=False, description="not in the baseline")
    notes: dict[str, str] = Field(
        default_factory=dict,
        description="metric → its note on this example (an LLM judge's short rationale)",
    )


#: a column of per-example values by position, NaN where an example has none
FloatColumn = npt.NDArray[np.float64]


def _floats(values: Sequence[float] | npt.NDArray[np.float64]) -> list[float]:
    """Python floats of a list or a numpy array (an array's items are numpy scalars)."""
    if isinstance(values, np.ndarray):
        return list(values.tolist())
    return [float(value) for value in values]


class ExampleTable(Sequence[ExampleResult]):
    """A suite's examples by position: the rows, and the columns reports rank them by.

    A million-example suite is not held as a million row objects: the runner keeps columns
    (:class:`ExampleColumns`) and builds a row when it is read, so a report that shows the
    worst ten builds ten. The column accessors answer what a report asks of every example
    (a metric's scores now and at the baseline, the flips, the new ones) without rows.
    A result read back from its file holds rows (:class:`ExampleRows`); both answer alike.
    """

    @property
    def ids(self) -> Sequence[str]:
        """Every example's id, in golden order."""
        return [row.id for row in self]

    def row(self, index: int) -> ExampleResult:
        """The example at ``index`` (built on demand where the table holds columns)."""
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    @overload
    def __getitem__(self, index: int) -> ExampleResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[ExampleResult]: ...
    def __getitem__(self, index: int | slice) -> ExampleResult | list[ExampleResult]:
        if isinstance(index, slice):
            return [self.row(i) for i in range(*index.indices(len(self)))]
        n = len(self)
        if not -n <= index < n:
            raise IndexError("example index out of range")
        return self.row(index % n if index < 0 else index)

    def __iter__(self) -> Iterator[ExampleResult]:
        for index in range(len(self)):
            yield self.row(index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} examples)"

    def score_names(self) -> list[str]:
        """The metrics the examples have scores of, in the order of their rows."""
        return list(dict.fromkeys(name for row in self for name in row.scores))

    def current(self, name: str) -> FloatColumn:
        """Each example's score on ``name`` now (NaN where it has none)."""
        return np.array([row.scores.get(name, math.nan) for row in self], dtype=np.float64)

    def baseline(self, name: str) -> FloatColumn:
        """Each example's score on ``name`` at the baseline (NaN where it has none)."""
        return np.array([row.baseline_scores.get(name, math.nan) for row in self], dtype=np.float64)

    def flipped(self, *, to_wrong: bool) -> dict[str, frozenset[int]]:
        """Metric → positions of the examples that flipped on it (to wrong, or to right)."""
        found: dict[str, set[int]] = {}
        for index, row in enumerate(self):
            for name in row.flipped_to_wrong if to_wrong else row.flipped_to_right:
                found.setdefault(name, set()).add(index)
        return {name: frozenset(positions) for name, positions in found.items()}

    def n_new(self) -> int:
        """How many examples are not in the baseline."""
        return sum(row.new for row in self)

    def tags_at(self, index: int) -> Sequence[str]:
        """The tags of the example at ``index``."""
        return self.row(index).tags

    def golden_fields(self) -> Iterator[tuple[Any, Sequence[str], Sequence[str]]]:
        """Each example's golden input, references and tags (what its digest is made of)."""
        for row in self:
            yield row.input, row.references, row.tags

    def record_digests(self) -> Sequence[str] | None:
        """Each example's golden record digest, in order, when the table was given them
        (the golden set computes them as it is read); None otherwise."""
        return None

    def json_rows(self) -> Iterator[bytes]:
        """Each row as ``model_dump_json(exclude_defaults=True)`` gives it, in order."""
        for row in self:
            yield row.model_dump_json(exclude_defaults=True).encode("utf-8")


class ExampleRows(ExampleTable):
    """Examples held as rows: a result read back from its file, or built by hand."""

    def __init__(self, rows: Sequence[ExampleResult]) -> None:
        self._rows = rows

    def row(self, index: int) -> ExampleResult:
        return self._rows[index]

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[ExampleResult]:
        return iter(self._rows)


def example_table(examples: Sequence[ExampleResult]) -> ExampleTable:
    """A suite's ``examples`` as a table, whichever way they are held."""
    return examples if isinstance(examples, ExampleTable) else ExampleRows(examples)


class GoldenLike(Protocol):
    """What a row needs of a golden record."""

    @property
    def id(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def tags(self) -> Sequence[str]: ...
    @property
    def input(self) -> Any: ...
    @property
    def references(self) -> Sequence[str]: ...


_EXAMPLE_FIELDS = set(ExampleResult.model_fields)
#: rows built at a time when they are streamed (columns are converted a slice at a time)
_ROWS_PER_SLICE = 1024


def _paired_column(column: FloatColumn, at: npt.NDArray[np.intp]) -> FloatColumn:
    """``column`` at the positions ``at``, NaN where ``at`` is -1 (not paired); all NaN when
    nothing was paired (every id renamed or every reference edited: an empty column)."""
    if not len(column):
        return np.full(len(at), math.nan)
    taken = column[np.maximum(at, 0)]
    taken[at < 0] = math.nan
    return taken


class ExampleColumns(ExampleTable):
    """A scored suite's examples as the runner has them: golden records, outputs, score
    columns. A row is built only when it is read; nothing here is copied per example.

    ``scores`` are aligned with ``records`` (a list or a numpy array per metric);
    ``baseline_scores`` are by id, for the ids the baseline has; ``baseline_outputs`` gives
    an id's blessed outputs (None when it is not blessed), and is None without a baseline.
    ``paired_at`` (optional) is each record's position in the gate's paired scores, -1
    where the baseline does not have it. Paired scores that share one table of positions
    (``position``, ``values_array``: the gate's) are read as arrays, a slice at a time.
    """

    def __init__(
        self,
        records: Sequence[GoldenLike],
        outputs: Mapping[str, Sequence[str]],
        *,
        scores: Mapping[str, Sequence[float] | npt.NDArray[np.float64]],
        baseline_scores: Mapping[str, Mapping[str, float]],
        baseline_outputs: Callable[[str], Sequence[str] | None] | None,
        flipped_to_wrong: Mapping[str, Collection[str]],
        flipped_to_right: Mapping[str, Collection[str]],
        notes: Mapping[str, Sequence[str | None]],
        paired_at: Sequence[int] | npt.NDArray[np.intp] | None = None,
        record_digests: Callable[[Sequence[str]], Sequence[str] | None] | None = None,
    ) -> None:
        self._records = records
        self._record_digests = record_digests
        self._outputs = outputs
        self._scores = scores
        self._baseline_scores = baseline_scores
        self._baseline_outputs = baseline_outputs
        # flips are few: id → the metrics it flipped on, in the gate's order of metrics
        self._to_wrong = _by_id(flipped_to_wrong)
        self._to_right = _by_id(flipped_to_right)
        self._notes = notes
        self._paired_at = None if paired_at is None else np.asarray(paired_at, dtype=np.intp)

    def __len__(self) -> int:
        return len(self._records)

    @property
    def ids(self) -> Sequence[str]:
        if isinstance(self._records, PackedRecords):  # without building a record each
            return list(self._records.ids)
        return [record.id for record in self._records]

    def _paired(self) -> tuple[npt.NDArray[np.intp], dict[str, FloatColumn]] | None:
        """Each record's position in the paired baseline scores and those scores as arrays,
        when every metric's paired scores share one table of positions (the gate's)."""
        columns: dict[str, FloatColumn] = {}
        shared: object = None
        for spec, values in self._baseline_scores.items():
            array = getattr(values, "values_array", None)
            position = getattr(values, "position", None)
            if not isinstance(array, np.ndarray) or position is None:
                return None
            if shared is not None and position is not shared:
                return None
            shared, columns[spec] = position, array
        if self._paired_at is not None and len(self._paired_at) == len(self._records):
            return self._paired_at, columns
        if not isinstance(shared, Mapping):
            return None
        at = np.fromiter(
            (shared.get(i, -1) for i in self.ids), dtype=np.intp, count=len(self._records)
        )
        self._paired_at = at
        return at, columns

    def _rows(self, start: int, stop: int) -> Iterator[dict[str, Any]]:
        """The fields of rows ``start`` to ``stop`` (a field at its default left out, as
        ``exclude_defaults`` leaves it), score columns converted a slice at a time."""
        scores = {spec: _floats(v[start:stop]) for spec, v in self._scores.items()}
        paired = self._paired() if self._baseline_scores else None
        blessed: dict[str, list[float]] = {}
        present: list[bool] = []
        if paired is not None:
            at = paired[0][start:stop]
            blessed = {s: _paired_column(array, at).tolist() for s, array in paired[1].items()}
            present = (at >= 0).tolist()
        outputs_of = self._baseline_outputs
        # a slice, not each record by index: packed records are cut out a block at a time
        records = self._records[start:stop]
        for at_slice, record in enumerate(records):
            example_id = record.id
            row: dict[str, Any] = {"id": example_id}
            if record.line:
                row["line"] = record.line
            if record.tags:
                row["tags"] = list(record.tags)
            if record.input is not None:
                row["input"] = record.input
            row["references"] = list(record.references)
            row["output"] = self._outputs[example_id][0]
            old = outputs_of(example_id) if outputs_of is not None else None
            if old:
                row["baseline_output"] = old[0]
            if scores:
                row["scores"] = {spec: column[at_slice] for spec, column in scores.items()}
            if paired is not None:
                if present[at_slice]:
                    row["baseline_scores"] = {s: c[at_slice] for s, c in blessed.items()}
            else:
                then = {
                    spec: float(values[example_id])
                    for spec, values in self._baseline_scores.items()
                    if example_id in values
                }
                if then:
                    row["baseline_scores"] = then
            wrong = self._to_wrong.get(example_id)
            if wrong:
                row["flipped_to_wrong"] = list(wrong)
            right = self._to_right.get(example_id)
            if right:
                row["flipped_to_right"] = list(right)
            if outputs_of is not None and old is None:
                row["new"] = True
            if self._notes:
                position = start + at_slice
                notes = {s: n[position] or "" for s, n in self._notes.items() if n[position]}
                if notes:
                    row["notes"] = notes
            yield row

    def row(self, index: int) -> ExampleResult:
        fields = next(self._rows(index, index + 1))
        # Built without re-validation: every field comes from validated, typed data. Every
        # field is given, so every row shares one "fields set" instead of a set of its own.
        return ExampleResult.model_construct(_fields_set=_EXAMPLE_FIELDS, **_filled(fields))

    def __iter__(self) -> Iterator[ExampleResult]:
        for start in range(0, len(self), _ROWS_PER_SLICE):
            for fields in self._rows(start, min(start + _ROWS_PER_SLICE, len(self))):
                yield ExampleResult.model_construct(_fields_set=_EXAMPLE_FIELDS, **_filled(fields))

    def json_rows(self) -> Iterator[bytes]:
        # The row's JSON straight from its fields: the same serializer as
        # ExampleResult.model_dump_json(exclude_defaults=True), the same bytes (a field at
        # its default is left out, the others in field order), without a model per row.
        for start in range(0, len(self), _ROWS_PER_SLICE):
            for fields in self._rows(start, min(start + _ROWS_PER_SLICE, len(self))):
                yield to_json(fields)

    def score_names(self) -> list[str]:
        return list(self._scores) if len(self) else []

    def current(self, name: str) -> FloatColumn:
        values = self._scores.get(name)
        if values is None:
            return np.full(len(self), math.nan)
        return np.asarray(values, dtype=np.float64)

    def baseline(self, name: str) -> FloatColumn:
        values = self._baseline_scores.get(name)
        if values is None:
            return np.full(len(self), math.nan)
        paired = self._paired()
        if paired is not None:
            at, columns = paired
            return _paired_column(columns[name], at)
        return np.fromiter(
            (values.get(i, math.nan) for i in self.ids), dtype=np.float64, count=len(self)
        )

    def flipped(self, *, to_wrong: bool) -> dict[str, frozenset[int]]:
        flips = self._to_wrong if to_wrong else self._to_right
        if not flips:
            return {}
        found: dict[str, set[int]] = {}
        for index, example_id in enumerate(self.ids):
            for spec in flips.get(example_id, ()):
                found.setdefault(spec, set()).add(index)
        return {spec: frozenset(positions) for spec, positions in found.items()}

    def n_new(self) -> int:
        blessed = self._baseline_outputs
        if blessed is None:
            return 0
        return sum(blessed(example_id) is None for example_id in self.ids)

    def tags_at(self, index: int) -> Sequence[str]:
        return list(self._records[index].tags)

    def golden_fields(self) -> Iterator[tuple[Any, Sequence[str], Sequence[str]]]:
        for record in self._records:
            yield record.input, record.references, record.tags

    def record_digests(self) -> Sequence[str] | None:
        found = self._record_digests
        return found(self.ids) if found is not None else None


def _by_id(flips: Mapping[str, Collection[str]]) -> dict[str, tuple[str, ...]]:
    """spec → ids turned into id → specs (in the order of the specs)."""
    found: dict[str, list[str]] = {}
    for spec, ids in flips.items():
        for example_id in ids:
            found.setdefault(example_id, []).append(spec)
    return {example_id: tuple(specs) for example_id, specs in found.items()}


def _filled(fields: dict[str, Any]) -> dict[str, Any]:
    """A row's fields with those left out at their defaults (fresh lists and dicts)."""
    return {
        "line": None,
        "tags": [],
        "input": None,
        "baseline_output": None,
        "scores": {},
        "baseline_scores": {},
        "flipped_to_wrong": [],
        "flipped_to_right": [],
        "new": False,
        "notes": {},
        **fields,
    }


class _ExamplesField:
    """Pydantic schema of ``SuiteResult.examples``: a list of rows, or an ExampleTable kept
    as it is; serialized one row at a time (rows of a table are built as they are written),
    with the JSON schema of a list of ExampleResult."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        item = handler.generate_schema(ExampleResult)
        listed = core_schema.list_schema(item)

        def serialize(value: Any, info: core_schema.SerializationInfo) -> Any:
            if isinstance(value, ExampleTable):
                return iter(value) if info.mode_is_json() else list(value)
            return value

        return core_schema.json_or_python_schema(
            json_schema=listed,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(ExampleTable), listed]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                serialize,
                info_arg=True,
                return_schema=core_schema.union_schema(
                    [listed, core_schema.generator_schema(item)]
                ),
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        return handler(core_schema.list_schema(schema["json_schema"]["items_schema"]))


class ChangedExample(_Model):
    """A golden example removed or edited since the baseline, with its blessed scores."""

    id: str
    baseline_scores: dict[str, float] = Field(default_factory=dict)
    baseline_output: str | None = None


class GoldenChange(_Model):
    """How the golden set differs from the baseline's; the gate compared the shared part."""

    baseline_hash: str = Field(description="content hash of the golden set at the baseline")
    n_shared: int = Field(description="examples in both, unchanged: the paired comparison's")
    added: list[str] = Field(default_factory=list, description="ids new since the baseline")
    removed: list[ChangedExample] = Field(default_factory=list)
    edited: list[ChangedExample] = Field(
        default_factory=list, description="same id, other content: treated as removed + added"
    )


class CacheUse(_Model):
    """Outputs not obtained from the system in this run, and cached outputs left unused."""

    reused: int = Field(description="outputs taken from the cache or a saved result")
    total: int = Field(description="outputs the suite needed")
    source: str = Field(description="cache | result (a saved result.json, by bless)")
    since: str | None = Field(default=None, description="when the reused outputs were made")
    path: str | None = None
    dropped: int = Field(default=0, description="cached outputs of other code, not reused")
    dropped_reason: str | None = None


class SuiteResult(_Model):
    """One suite: its verdict, metrics, checks, slices and examples."""

    name: str
    verdict: Verdict
    goldens: str = Field(description="path of the golden file, relative to the project root")
    golden_hash: str
    n_examples: int
    metrics: list[MetricSummary]
    checks: list[CheckResult]
    slices: list[SliceResult] = Field(default_factory=list)
    examples: Annotated[Sequence[ExampleResult], _ExamplesField] = Field(default_factory=list)
    error: str | None = None
    golden_change: GoldenChange | None = Field(
        default=None, description="set when the golden set changed since the baseline"
    )
    cache: CacheUse | None = Field(
        default=None, description="set when outputs were reused, or cached ones dropped"
    )
    system: str | None = Field(
        default=None,
        description="digest of the system's identity (settings, code fingerprint, cache_key);"
        " None for a predictions file",
    )


class SignificanceSettings(_Model):
    """How deltas were tested (None in the result when significance is off)."""

    method: str
    resamples: int
    alpha: float
    seed: int


class _GzipStream:
    """Bytes compressed in order into one gzip member (level 6, no timestamp).

    With ``background``, each batch is compressed in a thread of its own while the caller
    makes the next (zlib lets go of the GIL as it compresses: at a million examples that
    is ~8 s of the ~18 s a run spends writing its examples); at most ``_QUEUED_BATCHES``
    wait, so the text is never all held.
    """

    def __init__(self, *, background: bool) -> None:
        self._compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
        self._parts: list[bytes] = []
        self._pending: deque[Future[bytes]] = deque()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="gzip") if background else None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def add(self, data: bytes) -> None:
        if self._pool is None:
            self._parts.append(self._compressor.compress(data))
            return
        if len(self._pending) >= _QUEUED_BATCHES:
            self._parts.append(self._pending.popleft().result())
        self._pending.append(self._pool.submit(self._compressor.compress, data))

    def finish(self) -> bytes:
        """Every part compressed, and the end of the member."""
        while self._pending:
            self._parts.append(self._pending.popleft().result())
        self._parts.append(self._compressor.flush())
        return b"".join(self._parts)


def _is_baseline(text: str) -> bool:
    """Whether ``text`` is a goldgate baseline (given where a result was expected)."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return False
    version = document.get("schema_version") if isinstance(document, dict) else None
    return isinstance(version, str) and version.startswith("goldgate.baseline/")


class RunResult(_Model):
    """The whole run."""

    schema_version: str = RESULT_SCHEMA_VERSION
    goldgate_version: str
    created_at: str = Field(description="ISO 8601 timestamp; the only field that varies")
    verdict: Verdict
    config: str | None = None
    baseline: str | None = None
    baseline_found: bool = False
    significance: SignificanceSettings | None = None
    suites: list[SuiteResult]
    hints: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    examples_file: str | None = Field(
        default=None,
        description=(
            "when set, every suite's examples are not inline but in this file, relative to"
            " the result: gzip-compressed JSON Lines, one ExampleResult per line (fields at"
            " their default left out) plus the name of its suite under 'suite'"
        ),
    )

    @property
    def exit_code(self) -> int:
        """The command's exit code for this verdict."""
        return self.verdict.exit_code

    def checks(self) -> list[CheckResult]:
        """Every gate check of every suite, in order."""
        return [check for suite in self.suites for check in suite.checks]

    def to_json(self) -> str:
        """Stable JSON (sorted keys are not used: field order is the schema's order)."""
        return self.model_dump_json(indent=2) + "\n"

    def to_files(
        self, examples_file: str = EXAMPLES_FILE, *, threads: int = 1
    ) -> tuple[str, bytes]:
        """``result.json`` without the examples, and the gzip JSON Lines that hold them.

        The JSON stays small whatever the golden set's size; the side file is compressed and
        byte-stable (no timestamp in its gzip header). With ``threads`` above 1 the rows are
        compressed in a thread of their own while the next ones are dumped: the same bytes.
        """
        # Compressed row by row as the rows are dumped: the whole text of a million rows
        # (and its list of lines) is never held. The bytes are gzip.compress(text,
        # compresslevel=6, mtime=0)'s: zlib's output does not depend on how input is fed.
        batch: list[bytes] = []
        with _GzipStream(background=threads > 1) as compressed:
            for suite in self.suites:
                prefix = ('{"suite":' + json.dumps(suite.name, ensure_ascii=False) + ",").encode()
                # rows streamed from the suite's table: no model per row where it holds columns
                for row in example_table(suite.examples).json_rows():
                    batch.append(prefix + row[1:] if row != b"{}" else prefix[:-1] + b"}")
                    if len(batch) == _ROWS_PER_BATCH:
                        compressed.add(b"\n".join(batch) + b"\n")
                        batch.clear()
            if batch:
                compressed.add(b"\n".join(batch) + b"\n")
            data = compressed.finish()
        compact = self.model_copy(
            update={
                "examples_file": examples_file,
                "suites": [s.model_copy(update={"examples": []}) for s in self.suites],
            }
        )
        return compact.to_json(), data

    @classmethod
    def from_json_file(cls, path: Path, *, examples: bool = True) -> RunResult:
        """Read a saved result; raises ``InputError`` naming the file when it is not one.

        Its examples are read back from its side file unless ``examples`` is false (for a
        reader that needs only the scores).
        """
        from pydantic import ValidationError

        from goldgate.errors import InputError
        from goldgate.io.inputs import read_regular

        try:
            text = read_regular(path, InputError, what="result").decode("utf-8")
        except FileNotFoundError:
            raise InputError(f"{path}: no such result file") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 (byte {exc.start})") from None
        try:
            result = cls.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            if first["type"] == "json_invalid":
                problem = first["msg"]
                if "recursion limit" in problem:
                    problem = "nested too deeply"
                raise InputError(f"{path}: not a goldgate result: {problem}") from None
            if _is_baseline(text):
                raise InputError(
                    f"{path}: this is a goldgate baseline, not a result: pass the result.json"
                    " that `goldgate run` wrote into its report directory (goldgate-report/"
                    " unless report.dir says otherwise)"
                ) from None
            loc = ".".join(str(p) for p in first["loc"])
            raise InputError(f"{path}: not a goldgate result: {loc}: {first['msg']}") from None
        if result.examples_file is None or not examples:
            return result
        return result._with_examples(path.parent / result.examples_file)

    def _with_examples(self, side: Path) -> RunResult:
        """This result with the examples of its side file put back into its suites.

        The file is read no further than the result's examples may take (a row of at most
        ``MAX_EXAMPLE_ROW_BYTES``, no more rows than the suite's examples), and each suite
        must get as many rows as the result says it has examples.
        """
        from pydantic import ValidationError

        from goldgate.errors import InputError
        from goldgate.io.inputs import open_regular

        by_suite: dict[str, list[ExampleResult]] = {s.name: [] for s in self.suites}
        expected = {s.name: s.n_examples for s in self.suites}
        total = sum(expected.values())
        budget = min(total * MAX_EXAMPLE_ROW_BYTES, MAX_EXAMPLES_BYTES)
        used = 0
        try:
            with (
                open_regular(side, InputError, what="the examples file of the result") as raw,
                gzip.GzipFile(fileobj=raw, mode="rb") as stream,
            ):
                number = 0
                while line := stream.readline(MAX_EXAMPLE_ROW_BYTES + 1):
                    number += 1
                    used += len(line)
                    if len(line) > MAX_EXAMPLE_ROW_BYTES or used > budget:
                        most = (
                            f"a row may take ({MAX_EXAMPLE_ROW_BYTES:,} bytes)"
                            if len(line) > MAX_EXAMPLE_ROW_BYTES
                            else f"the result's {total:,} examples may take ({budget:,} bytes)"
                        )
                        raise InputError(f"{side}:{number}: the examples inflate past what {most}")
                    try:
                        row = json.loads(line.decode("utf-8"))
                        name = row.pop("suite")
                        rows = by_suite[name]
                        if len(rows) >= expected[name]:
                            raise InputError(
                                f"{side}:{number}: more example rows for suite {name!r} than"
                                f" the {expected[name]:,} examples the result says it has"
                            )
                        rows.append(ExampleResult.model_validate(row))
                    except (ValueError, KeyError, TypeError, AttributeError) as exc:
                        what = (
                            f"{exc.errors()[0]['msg']}"
                            if isinstance(exc, ValidationError)
                            else f"unknown suite {exc}"
                            if isinstance(exc, KeyError)
                            else "not a JSON object with a 'suite'"
                        )
                        raise InputError(f"{side}:{number}: not an example row: {what}") from None
        except FileNotFoundError as exc:
            reason = exc.strerror or str(exc)
            raise InputError(f"{side}: cannot read the examples of the result: {reason}") from None
        except OSError as exc:  # gzip.BadGzipFile among them
            raise InputError(f"{side}: damaged examples file: {exc.strerror or exc}") from None
        except (EOFError, zlib.error) as exc:
            raise InputError(f"{side}: damaged examples file: {exc}") from None
        for name, rows in by_suite.items():
            if len(rows) != expected[name]:
                raise InputError(
                    f"{side}: {len(rows):,} example rows for suite {name!r}, where the result"
                    f" says it has {expected[name]:,} examples; re-run to write both again"
                )
        suites = [s.model_copy(update={"examples": by_suite[s.name]}) for s in self.suites]
        return self.model_copy(update={"suites": suites, "examples_file": None})
