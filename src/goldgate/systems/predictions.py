"""Read a system's outputs from a predictions file (JSON lines or Parquet) for a golden set.

Each line or row is ``{"id", "output"}`` (``"outputs": [...]`` when ``samples`` > 1); the
checks of one row (:func:`prediction_id`, its outputs) are shared with the Dask reading of a
predictions file that does not fit in memory.
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from goldgate.errors import InputError, SystemRunError, first_of
from goldgate.io.text_inputs import json_lines, read_utf8
from goldgate.model.goldens import GoldenSet
from goldgate.systems.calls import SHOWN_IDS, _ids, _text_id, _type, lone_surrogate


def read_predictions(
    path: Path,
    golden: GoldenSet,
    *,
    samples: int = 1,
    strict: bool = True,
    ignored: list[str] | None = None,
) -> dict[str, list[str]]:
    """Read ``{"id", "output"}`` lines (``"outputs": [...]`` for samples > 1) for a golden set.

    Lines of ids the golden set does not have are an error when ``strict``; else they are
    left out, and a warning naming them is appended to ``ignored`` (examples removed from
    the golden set in a pull request whose pipeline still answered them).

    Outputs are kept by golden position and returned keyed by the golden set's own id
    strings: at a million lines, the file's id strings and a line number per id, kept until
    the end, would be freed between the outputs kept and leave the memory in holes.
    """
    ids = golden.ids()
    index_of = {example_id: index for index, example_id in enumerate(ids)}
    lines = _FirstLines(index_of)
    outputs_at: list[list[str] | None] = [None] * len(ids)
    unknown: list[tuple[str, int]] = []
    for number, item in _prediction_rows(path):
        if samples == 1 and type(item) is dict and len(item) == 2:
            # The usual line, {"id": text, "output": text} for a known id not seen yet,
            # taken as the checks below would take it.
            record_id, output = item.get("id"), item.get("output")
            if type(record_id) is str and type(output) is str:
                at = index_of.get(record_id)
                if (
                    at is not None
                    and outputs_at[at] is None
                    and (output.isascii() or lone_surrogate(output) is None)
                ):
                    lines.note(at, number)
                    outputs_at[at] = [output]
                    continue
        where = f"{path}:{number}"
        record_id = prediction_id(item, where, number, lines)
        at = index_of.get(record_id)
        if at is None:
            unknown.append((record_id, number))
            continue
        outputs_at[at] = _prediction_outputs(item, samples, f"{where}: id {record_id!r}")
    if unknown:
        shown = first_of([f"{rid!r} (line {n})" for rid, n in unknown], SHOWN_IDS)
        problem = f"{path}: {len(unknown)} id(s) not in the golden set {golden.path}: {shown}"
        if strict or ignored is None:
            raise SystemRunError(problem)
        ignored.append(f"{problem}; left out (system.strict: true makes this an error)")
    missing = [example_id for example_id, got in zip(ids, outputs_at, strict=True) if got is None]
    if missing:
        raise SystemRunError(
            f"{path}: no output for {len(missing)} of {len(ids)} golden id(s): {_ids(missing)}"
        )
    return {
        example_id: got for example_id, got in zip(ids, outputs_at, strict=True) if got is not None
    }


class _FirstLines(MutableMapping[str, int]):
    """id → the line it was first seen on: a number per golden position in an array (no
    object per line), a dict for ids the golden set does not have."""

    def __init__(self, index_of: Mapping[str, int]) -> None:
        self._index_of = index_of
        self._lines = array.array("q", [-1]) * len(index_of)
        self._others: dict[str, int] = {}

    def note(self, at: int, line: int) -> None:
        """The golden id at position ``at`` was seen on ``line``."""
        self._lines[at] = line

    def __getitem__(self, record_id: str) -> int:
        at = self._index_of.get(record_id)
        if at is None:
            return self._others[record_id]
        if self._lines[at] < 0:
            raise KeyError(record_id)
        return self._lines[at]

    def __setitem__(self, record_id: str, line: int) -> None:
        at = self._index_of.get(record_id)
        if at is None:
            self._others[record_id] = line
        else:
            self._lines[at] = line

    def __delitem__(self, record_id: str) -> None:
        self[record_id]  # KeyError when not seen
        at = self._index_of.get(record_id)
        if at is None:
            del self._others[record_id]
        else:
            self._lines[at] = -1

    def __contains__(self, record_id: object) -> bool:
        if not isinstance(record_id, str):
            return False
        at = self._index_of.get(record_id)
        return record_id in self._others if at is None else self._lines[at] >= 0

    def __iter__(self) -> Iterator[str]:
        seen = (record_id for record_id, at in self._index_of.items() if self._lines[at] >= 0)
        return itertools.chain(seen, self._others)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def prediction_id(item: Any, where: str, number: int, lines: MutableMapping[str, int]) -> str:
    """The id of one predictions row (noted in ``lines``); a bad or repeated one is an error."""
    if not isinstance(item, dict):
        raise InputError(f"{where}: expected an object with 'id' and 'output'")
    record_id = _text_id(item.get("id"))
    if record_id is None:
        raise InputError(f"{where}: the line has no 'id' (text)")
    if record_id in lines:
        raise InputError(f"{where}: duplicate id {record_id!r} (first on line {lines[record_id]})")
    lines[record_id] = number
    return record_id


#: the keys of a predictions row goldgate reads (a Parquet file's other columns are not decoded)
PREDICTION_FIELDS = ("id", "output", "outputs")


def _prediction_rows(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line or row, item)`` of a JSONL predictions file, or of a Parquet one in batches."""
    from goldgate.io.parquet import is_parquet, iter_rows

    if is_parquet(path):
        yield from iter_rows(path, InputError, what="predictions file", columns=PREDICTION_FIELDS)
        return
    text = read_utf8(path, InputError, what="predictions file")
    yield from json_lines(text, str(path), InputError)


def _prediction_outputs(item: dict[str, Any], samples: int, where: str) -> list[str]:
    if "outputs" in item and "output" in item:
        raise InputError(f"{where}: give 'output' or 'outputs', not both")
    if "outputs" in item:
        values = item["outputs"]
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise InputError(f"{where}: 'outputs' must be a list of texts")
        if len(values) != samples:
            raise InputError(
                f"{where}: 'outputs' holds {len(values)} text(s), expected {samples} "
                f"(system.samples)"
            )
        for value in values:
            bad = lone_surrogate(value)
            if bad is not None:
                raise InputError(f"{where}: 'outputs' holds a lone surrogate '{bad}', not text")
        return list(values)
    if "output" not in item:
        raise InputError(f"{where}: no 'output'")
    if not isinstance(item["output"], str):
        raise InputError(f"{where}: 'output' must be text, got {_type(item['output'])}")
    bad = lone_surrogate(item["output"])
    if bad is not None:
        raise InputError(f"{where}: 'output' holds a lone surrogate '{bad}', which is not text")
    if samples != 1:
        raise InputError(
            f"{where}: system.samples is {samples}: give 'outputs', a list of {samples} texts"
        )
    return [item["output"]]
