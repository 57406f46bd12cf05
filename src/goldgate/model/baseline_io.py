"""The baseline file read and written: parsed strictly, checked whole, written atomically.

A damaged file (invalid JSON, a key out of place, packed blocks that do not agree with each
other or with the suite) is a :class:`BaselineError` naming the file and what is wrong, with
the advice to restore it from git or bless again; a baseline is also read as it is at a git
revision. Written, the file is stable: sorted keys, one line per list of numbers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from goldgate.errors import BaselineError
from goldgate.io.atomic import write_text_atomic
from goldgate.io.git import GitFailed as _GitFailed
from goldgate.io.git import git as _git
from goldgate.io.inputs import MAX_NESTING, read_regular
from goldgate.model.baseline import (
    BASELINE_SCHEMA_VERSION,
    BASELINE_SCHEMA_VERSIONS,
    PACKED_SCHEMA_VERSION,
    Baseline,
    SuiteBaseline,
    outputs_limit,
)
from goldgate.model.packed import PackError, unpack_bytes


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
            if suite["packed"].get("categories") is None:
                suite["packed"].pop("categories", None)
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
