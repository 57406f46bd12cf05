"""The blessed baseline: versioned JSON, written atomically, read back strictly.

Per suite it holds the golden set's content hash, each metric's signature, score and
statistic names, and per example (keyed by id) a digest of the example, its outputs and its
additive statistics per metric and sample. Paired tests, flips and diffs need nothing else.

The file is stable: keys are sorted, numbers are written as Python's shortest round-trip
repr and nothing in it depends on the time, so blessing the same run twice gives the same
bytes. Lists of numbers stay on one line, so a re-bless shows up in a diff as one line per
changed example and metric.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldgate.atomic import write_text_atomic
from goldgate.errors import BaselineError
from goldgate.gitinfo import GitFailed as _GitFailed
from goldgate.gitinfo import git as _git
from goldgate.inputs import MAX_NESTING, read_regular
from goldgate.metrics.base import Metric
from goldgate.stats import FloatArray, sample_score

BASELINE_SCHEMA_VERSION: Literal["goldgate.baseline/1"] = "goldgate.baseline/1"


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


class SuiteBaseline(_Model):
    """One suite as blessed."""

    golden_hash: str
    goldens: str
    samples: int = Field(ge=1)
    metrics: dict[str, BaselineMetric]
    examples: dict[str, BaselineExample]
    forced: list[str] | None = Field(
        default=None,
        description="gate checks that failed when this suite was blessed with"
        " --allow-regression (absent when none did)",
    )

    def stats_array(self, spec: str, ids: Sequence[str]) -> FloatArray:
        """The statistics of ``spec`` for ``ids`` as a ``(samples, n, k)`` float64 array."""
        width = len(self.metrics[spec].stat_names)
        if not ids:
            return np.zeros((self.samples, 0, width), dtype=np.float64)
        rows = [self.examples[example_id].stats[spec] for example_id in ids]
        return (
            np.asarray(rows, dtype=np.float64)
            .reshape(len(ids), self.samples, width)
            .transpose(1, 0, 2)
        )


class Baseline(_Model):
    """The whole baseline file."""

    schema_version: Literal["goldgate.baseline/1"] = BASELINE_SCHEMA_VERSION
    goldgate_version: str
    suites: dict[str, SuiteBaseline]


def record_digest(input_value: Any, references: Sequence[str], tags: Sequence[str]) -> str:
    """A short, stable hash of one golden record's content (not its id, line or meta)."""
    canonical = json.dumps(
        [input_value, list(references), sorted(tags)],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def strip_nrefs(signature: str) -> str:
    """A signature without its ``nrefs`` field, which depends on the whole set, not an example."""
    return "|".join(part for part in signature.split("|") if not part.startswith("nrefs:"))


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
    if version != BASELINE_SCHEMA_VERSION:
        raise BaselineError(
            f"{source}: not a goldgate baseline of schema {BASELINE_SCHEMA_VERSION!r}"
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
    for name, suite in baseline.suites.items():
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
    """The file's text: sorted keys, indented objects, one-line lists of scalars."""
    data = baseline.model_dump(mode="json")
    for suite in data["suites"].values():
        if suite.get("forced") is None:  # only a forced bless shows up in the file's diff
            suite.pop("forced", None)
    return _dump(data, 0) + "\n"


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
    ids = list(suite_baseline.examples)
    with np.errstate(over="ignore", invalid="ignore"):
        recomputed = sample_score(metric, suite_baseline.stats_array(spec, ids)) if ids else None
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
    blessed = suite_baseline.examples
    if len(blessed) == len(digests) and all(
        example_id in blessed and blessed[example_id].digest == digest
        for example_id, digest in digests.items()
    ):
        return
    problems = [f"example {i} is missing" for i in digests if i not in blessed]
    problems += [f"example {i} is not in the golden set" for i in blessed if i not in digests]
    problems += [
        f"example {i} has another digest"
        for i, digest in digests.items()
        if i in blessed and blessed[i].digest != digest
    ]
    shown = ", ".join(problems[:3]) + (
        f" and {len(problems) - 3} more" if len(problems) > 3 else ""
    )
    raise BaselineError(
        f"{source}: damaged baseline: suite {suite!r}: its golden hash matches the golden set"
        f" but its examples do not ({shown}); restore it from git or run `goldgate bless` again"
    )


def _short_hash(value: str) -> str:
    return value[:19] + "…" if len(value) > 20 else value


def _golden_changes(suite_baseline: SuiteBaseline, digests: Mapping[str, str]) -> tuple[str, bool]:
    blessed = suite_baseline.examples
    added = [i for i in digests if i not in blessed]
    removed = [i for i in blessed if i not in digests]
    changed = [i for i in digests if i in blessed and blessed[i].digest != digests[i]]
    parts = []
    for label, ids in (("added", added), ("removed", removed), ("changed", changed)):
        if ids:
            shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            parts.append(f"{len(ids)} {label}: {shown}")
    detail = f": {'; '.join(parts)}" if parts else ""
    return detail, bool(added) and not changed
