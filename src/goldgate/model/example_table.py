"""A suite's examples: the row model, and the tables that hold the rows or build them when read.

A result's ``examples`` are an :class:`ExampleTable`: rows (:class:`ExampleRows`, a result read
back from its file) or the runner's columns (:class:`ExampleColumns`), which build a row only
when it is read, so a million-example suite is not held as a million row objects.
:class:`ExamplesField` is the pydantic schema that lets a result hold either.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, Protocol, overload

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema, to_json

from goldgate.model.diagnosis import ExampleDiagnosis
from goldgate.model.golden_records import PackedRecords


class ExampleResult(BaseModel):
    """One golden example: its texts and per-example scores now and at the baseline."""

    model_config = ConfigDict(extra="forbid")

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
    diagnosis: ExampleDiagnosis | None = Field(
        default=None, description="the failure modes of its current and blessed outputs"
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

    def diagnosis_inputs(self) -> Iterator[tuple[str, str | None, Any, Sequence[str]]]:
        """Each example's output, blessed output (None when it has none), input and
        references, in order: what the failure-mode detectors read."""
        for row in self:
            yield row.output, row.baseline_output, row.input, row.references

    def diagnosis_inputs_at(
        self, positions: Sequence[int]
    ) -> Iterator[tuple[str, str | None, Any, Sequence[str]]]:
        """``diagnosis_inputs`` of the examples at ``positions`` (ascending) alone."""
        for index in positions:
            row = self[index]
            yield row.output, row.baseline_output, row.input, row.references

    def diagnosis_outputs(self) -> Iterator[tuple[str, str | None]]:
        """Each example's output and blessed output (None when it has none), in order."""
        for output, old, _, _ in self.diagnosis_inputs():
            yield output, old

    def with_diagnosis(self, columns: DiagnosisColumns) -> ExampleTable:
        """This table with each example's categories (``ExampleResult.diagnosis``) set."""
        rows = [
            row.model_copy(update={"diagnosis": columns.at(index)})
            for index, row in enumerate(self)
        ]
        return ExampleRows(rows)

    def json_rows(self) -> Iterator[bytes]:
        """Each row as ``model_dump_json(exclude_defaults=True)`` gives it, in order."""
        for row in self:
            yield row.model_dump_json(exclude_defaults=True).encode("utf-8")


class DiagnosisColumns:
    """Each example's categories as bit masks over ``names`` (bit i: ``names[i]``): two
    integers an example, not a list of names each."""

    def __init__(
        self,
        names: Sequence[str],
        current: npt.NDArray[np.uint64],
        baseline: npt.NDArray[np.uint64],
        has_baseline: npt.NDArray[np.bool_],
    ) -> None:
        self.names = tuple(names)
        self.current = current
        self.baseline = baseline
        self.has_baseline = has_baseline
        self._lists: dict[int, list[str]] = {}

    def names_of(self, mask: int) -> list[str]:
        """The names of the bits set in ``mask``, in detector order."""
        found = self._lists.get(mask)
        if found is None:
            found = [name for bit, name in enumerate(self.names) if mask >> bit & 1]
            self._lists[mask] = found
        return list(found)

    def fields(self, index: int) -> dict[str, Any]:
        """The ``diagnosis`` field of the example at ``index``, as JSON data."""
        return {
            "current": self.names_of(int(self.current[index])),
            "baseline": self.names_of(int(self.baseline[index]))
            if self.has_baseline[index]
            else None,
        }

    def slice_fields(self, start: int, stop: int) -> list[dict[str, Any]]:
        """``fields`` of the examples ``start`` to ``stop``, for serializing at once: the
        masks converted a slice at a time, one (read-only, shared) dict per distinct pair."""
        current = self.current[start:stop].tolist()
        baseline = self.baseline[start:stop].tolist()
        has = self.has_baseline[start:stop].tolist()
        made: dict[tuple[int, int], dict[str, Any]] = {}
        out = []
        for now, then, known in zip(current, baseline, has, strict=True):
            key = (now, then if known else -1)
            found = made.get(key)
            if found is None:
                found = made[key] = {
                    "current": self.names_of(now),
                    "baseline": self.names_of(then) if known else None,
                }
            out.append(found)
        return out

    def at(self, index: int) -> ExampleDiagnosis:
        return ExampleDiagnosis(**self.fields(index))


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
        self._diagnosis: DiagnosisColumns | None = None

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
        found = self._diagnosis.slice_fields(start, stop) if self._diagnosis is not None else None
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
            if found is not None:
                row["diagnosis"] = found[at_slice]
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

    def diagnosis_inputs(self) -> Iterator[tuple[str, str | None, Any, Sequence[str]]]:
        outputs_of = self._baseline_outputs
        for start in range(0, len(self), _ROWS_PER_SLICE):
            for record in self._records[start : start + _ROWS_PER_SLICE]:
                old = outputs_of(record.id) if outputs_of is not None else None
                yield (
                    self._outputs[record.id][0],
                    old[0] if old else None,
                    record.input,
                    record.references,
                )

    def diagnosis_inputs_at(
        self, positions: Sequence[int]
    ) -> Iterator[tuple[str, str | None, Any, Sequence[str]]]:
        """``diagnosis_inputs`` of the examples at ``positions`` (ascending) alone."""
        outputs_of = self._baseline_outputs
        for index in positions:
            record = self._records[index]
            old = outputs_of(record.id) if outputs_of is not None else None
            yield (
                self._outputs[record.id][0],
                old[0] if old else None,
                record.input,
                record.references,
            )

    def diagnosis_outputs(self) -> Iterator[tuple[str, str | None]]:
        # by id alone: no golden record is decoded for what only the outputs answer
        outputs_of = self._baseline_outputs
        outputs = self._outputs
        for example_id in self.ids:
            old = outputs_of(example_id) if outputs_of is not None else None
            yield outputs[example_id][0], old[0] if old else None

    def with_diagnosis(self, columns: DiagnosisColumns) -> ExampleTable:
        table = copy.copy(self)
        table._diagnosis = columns
        return table


def _by_id(flips: Mapping[str, Collection[str]]) -> dict[str, tuple[str, ...]]:
    """spec → ids turned into id → specs (in the order of the specs)."""
    found: dict[str, list[str]] = {}
    for spec, ids in flips.items():
        for example_id in ids:
            found.setdefault(example_id, []).append(spec)
    return {example_id: tuple(specs) for example_id, specs in found.items()}


def _filled(fields: dict[str, Any]) -> dict[str, Any]:
    """A row's fields with those left out at their defaults (fresh lists and dicts)."""
    filled = {
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
        "diagnosis": None,
        **fields,
    }
    if filled["diagnosis"] is not None:
        filled["diagnosis"] = ExampleDiagnosis.model_construct(**filled["diagnosis"])
    return filled


class ExamplesField:
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
