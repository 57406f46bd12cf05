"""goldgate.yaml (or ``[tool.goldgate]`` in pyproject.toml) → frozen, validated models.

Every mistake is a :class:`ConfigError` that names the file, the line (YAML only: TOML gives
no positions), the key path (``suites.qa.gate.exact_macth``) and the nearest valid spelling.
A loaded :class:`Config` holds absolute paths, resolved against the config file's directory.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from goldgate.errors import ConfigError, GoldgateError, MetricError, did_you_mean
from goldgate.io.inputs import MAX_CONFIG_BYTES, read_regular
from goldgate.io.user_code import importable_from
from goldgate.io.yaml import KeyPath, dotted, line_of, load_yaml_with_lines
from goldgate.metrics import PARALLEL_MIN_EXAMPLES
from goldgate.metrics.base import Metric

CONFIG_FILENAMES = ("goldgate.yaml", "goldgate.yml")
PYPROJECT = "pyproject.toml"
SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
CALLABLE_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
SCHEMA_ID = "https://goldgate.dev/schema/goldgate.schema.json"


class _KeyedError(ValueError):
    """A check on a model that points at a key below the model (``gate.exact_macth``)."""

    def __init__(self, message: str, subpath: KeyPath = (), *, metric: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.subpath = subpath
        self.metric = metric


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SystemConfig(_Model):
    """Where candidate outputs come from: a predictions file, a command or a Python callable.

    For a ``command`` goldgate starts ONE process per suite, writes every input to its stdin
    as JSONL and reads outputs as they arrive; ``concurrency`` is passed to it as the
    ``GOLDGATE_CONCURRENCY`` environment variable (how to use it is the command's business)
    and ``timeout_s`` bounds the wait for each next output. For a ``callable`` at most
    ``concurrency`` calls run at once and each call gets ``timeout_s``.
    """

    predictions: str | None = Field(
        default=None, description="JSONL file of {id, output} lines; may contain {suite}"
    )
    command: str | list[str] | None = Field(
        default=None,
        description="command reading JSONL {id, input} on stdin, writing {id, output} on stdout",
    )
    callable: str | None = Field(
        default=None, description="module:function taking an input, returning a string"
    )
    concurrency: int = Field(default=8, ge=1, le=1024)
    # A bound, because the waits beneath (threading, subprocess) overflow on .inf or 1e12.
    timeout_s: float = Field(default=60.0, gt=0, le=7 * 24 * 3600)
    samples: int = Field(default=1, ge=1, le=1000, description="outputs per input")
    env: dict[str, str] = Field(default_factory=dict, description="extra environment (command)")
    cache_key: str | None = Field(
        default=None,
        description="part of the cache's identity for what lives outside the repository (a"
        " model version, an endpoint): change it and no cached output is reused",
    )
    cache: Literal["resume", "reuse", "off"] = Field(
        default="resume",
        description="resume: reuse outputs of an interrupted run only; reuse: reuse outputs "
        "of any earlier run with the same system; off: never cache",
    )
    strict: bool = Field(
        default=False,
        description="predictions: an id the golden set does not have is an error (exit 2);"
        " by default it is left out with a warning naming it (examples removed in a pull"
        " request, whose pipeline still answered them)",
    )

    @model_validator(mode="after")
    def _one_source(self) -> SystemConfig:
        given = [k for k in ("predictions", "command", "callable") if getattr(self, k) is not None]
        if len(given) != 1:
            found = f"found {' and '.join(given)}" if given else "found none"
            raise _KeyedError(f"set exactly one of predictions, command, callable ({found})")
        if self.command is not None:
            try:
                argv = self.argv()
            except ValueError as exc:
                raise _KeyedError(f"cannot split the command: {exc}", ("command",)) from None
            if not argv or not all(argv):
                raise _KeyedError("the command is empty", ("command",))
        if self.callable is not None and not CALLABLE_PATH.match(self.callable):
            raise _KeyedError(
                f"expected 'package.module:function', got {self.callable!r}", ("callable",)
            )
        if self.predictions is not None and not self.predictions.strip():
            raise _KeyedError("the predictions path is empty", ("predictions",))
        return self

    @property
    def kind(self) -> Literal["predictions", "command", "callable"]:
        """Which of the three sources this system uses."""
        if self.predictions is not None:
            return "predictions"
        return "command" if self.command is not None else "callable"

    def argv(self) -> list[str]:
        """The command as an argument list (``shlex.split`` of a string; never a shell)."""
        if self.command is None:
            return []
        return shlex.split(self.command) if isinstance(self.command, str) else list(self.command)

    def predictions_path(self, suite: str, root: Path) -> Path:
        """The predictions file of ``suite``, ``{suite}`` substituted, resolved against root."""
        if self.predictions is None:
            raise ValueError("this system has no predictions file")
        return root / self.predictions.replace("{suite}", suite)

    def predictions_location(self, suite: str, root: Path) -> str:
        """Like :meth:`predictions_path`, but an fsspec URL (``s3://...``) is kept as written."""
        if self.predictions is not None and "://" in self.predictions:
            return self.predictions.replace("{suite}", suite)
        return str(self.predictions_path(suite, root))


class GateRule(_Model):
    """The checks on one metric: thresholds and allowed drops against the baseline."""

    # YAML spells NaN `.nan`; a NaN threshold would fail (or pass) every comparison.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    min: float | None = Field(default=None, description="the score must be at least this")
    max: float | None = Field(default=None, description="the score must be at most this")
    max_drop: float | None = Field(
        default=None, ge=0, description="allowed drop below the baseline, in points"
    )
    max_drop_rel: float | None = Field(
        default=None, ge=0, le=1, description="allowed drop as a fraction of the baseline"
    )
    max_flips: int | None = Field(
        default=None, ge=0, description="examples allowed to go from correct to wrong"
    )
    max_drift: float | None = Field(
        default=None, ge=0, description="allowed drop below the anchor (see `anchor`), in points"
    )
    max_drift_rel: float | None = Field(
        default=None, ge=0, le=1, description="allowed drop as a fraction of the anchor"
    )
    slices: bool = Field(default=False, description="apply the same rule to every tag slice")

    @model_validator(mode="after")
    def _some_check(self) -> GateRule:
        checks = (
            "min",
            "max",
            "max_drop",
            "max_drop_rel",
            "max_flips",
            "max_drift",
            "max_drift_rel",
        )
        if all(getattr(self, name) is None for name in checks):
            raise _KeyedError(f"a gate rule needs at least one of {', '.join(checks)}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise _KeyedError(f"min ({self.min}) is above max ({self.max})", ("min",))
        return self


class SuiteConfig(_Model):
    """One golden set, the metrics computed on it and the gate over them."""

    goldens: Path = Field(
        description="golden set file: .jsonl, .yaml/.yml, .csv or .parquet; with engine.dask"
        " also a glob of many files or an fsspec URL (s3://..., file://...)"
    )
    metrics: dict[str, dict[str, Any]] = Field(
        description="metric name (or module:function) → options"
    )
    gate: dict[str, GateRule] = Field(default_factory=dict)
    system: SystemConfig | None = Field(
        default=None, description="this suite's own system (replaces the top-level one)"
    )
    slices: bool = Field(default=True, description="score each tag as a slice")
    # An fsspec URL as written: a Path would fold its "//" (s3://b/k -> s3:/b/k).
    _goldens_url: str | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_url(cls, data: Any, handler: Callable[[Any], SuiteConfig]) -> SuiteConfig:
        suite = handler(data)
        given = data.get("goldens") if isinstance(data, dict) else None
        if isinstance(given, str) and "://" in given:
            suite._goldens_url = given
        return suite

    @property
    def goldens_url(self) -> str | None:
        """``goldens`` when it is a URL (read on a Dask cluster), as written."""
        return self._goldens_url

    @property
    def goldens_location(self) -> str:
        """Where the golden set is: its URL, or its (resolved) path, maybe a glob."""
        return self._goldens_url or str(self.goldens)

    @field_validator("metrics", mode="before")
    @classmethod
    def _empty_options(cls, value: Any) -> Any:
        # `bleu:` with nothing after it is YAML null: the metric with its defaults.
        if isinstance(value, dict):
            return {name: {} if options is None else options for name, options in value.items()}
        return value

    @model_validator(mode="after")
    def _check_metrics_and_gate(self) -> SuiteConfig:
        if not self.metrics:
            raise _KeyedError("a suite needs at least one metric", ("metrics",))
        from goldgate.metrics.registry import create_metric

        for name, options in self.metrics.items():
            try:
                create_metric(name, options)
            except MetricError as exc:
                raise _KeyedError(str(exc), ("metrics", name), metric=True) from None
        for name in self.gate:
            if name not in self.metrics:
                hint = did_you_mean(name, list(self.metrics))
                known = ", ".join(self.metrics)
                raise _KeyedError(
                    f"the gate names {name!r}, which is not a metric of this suite{hint}; "
                    f"its metrics: {known}",
                    ("gate", name),
                )
        return self

    def create_metrics(self) -> dict[str, Metric[Any]]:
        """Build this suite's metrics (name → Metric), in configuration order."""
        from goldgate.metrics.registry import create_metric

        return {name: create_metric(name, options) for name, options in self.metrics.items()}


class SignificanceConfig(_Model):
    """The paired bootstrap that tells a real drop from noise."""

    method: Literal["paired_bootstrap"] = "paired_bootstrap"
    resamples: int = Field(default=1000, ge=1, le=1_000_000)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    seed: int = Field(default=0, ge=0)  # numpy's generators refuse negative seeds


class DaskConfig(_Model):
    """A Dask cluster that scores and runs a callable system (the ``goldgate[dask]`` extra)."""

    address: str = Field(
        description="scheduler address (tcp://host:8786), or 'local' for a LocalCluster here",
        min_length=1,
    )
    no_workers_timeout_s: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description="seconds the cluster may have no worker while a task waits before the run"
        " stops with an error (workers that died and were not replaced)",
    )


class EngineConfig(_Model):
    """How scoring runs: ``jobs`` processes on this machine, or a Dask cluster."""

    jobs: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description=(
            f"scoring processes; default: every core for {PARALLEL_MIN_EXAMPLES:,} examples"
            " or more, else 1"
        ),
    )
    dask: DaskConfig | None = Field(default=None, description="run on this Dask cluster")

    @property
    def dask_address(self) -> str | None:
        """The Dask scheduler's address (or ``local``), None to run here."""
        return self.dask.address if self.dask is not None else None


ReportFormat = Literal["md", "html", "json", "junit"]
ALL_REPORT_FORMATS: tuple[ReportFormat, ...] = ("md", "html", "json", "junit")


class ReportConfig(_Model):
    """Where reports are written and in which formats."""

    dir: Path = Path("goldgate-report")
    formats: list[ReportFormat] = Field(default_factory=lambda: list(ALL_REPORT_FORMATS))


class AnchorConfig(_Model):
    """What ``max_drift`` measures from: a git revision, or the best of the last N blesses."""

    ref: str | None = Field(
        default=None, description="a git revision (a release tag) whose baseline is the anchor"
    )
    best_of: int = Field(
        default=10,
        ge=1,
        le=10_000,
        description="without ref: the best score of the last N blesses (the baseline's commits)",
    )


class HistoryConfig(_Model):
    """The run history: an SQLite file every run appends to (``history: off`` for none)."""

    path: Path | None = Field(
        default=None, description="the SQLite file (default: <cache_dir>/history.sqlite)"
    )
    examples: bool = Field(
        default=True, description="keep per-example scores (to find flaky examples)"
    )


def _switch(value: Any) -> Any:
    """YAML 1.1 reads a bare ``off`` as false; "off" arrives quoted or from TOML."""
    if value is False or (isinstance(value, str) and value.lower() in ("off", "false", "no")):
        return None
    if value is True or (isinstance(value, str) and value.lower() in ("on", "true", "yes")):
        return {}
    return value


class Config(_Model):
    """The whole configuration; ``root`` is the directory every relative path resolves against."""

    version: Literal[1] = Field(description="configuration format version")
    system: SystemConfig | None = Field(
        default=None, description="the system under test (a suite may set its own)"
    )
    suites: dict[str, SuiteConfig]
    significance: SignificanceConfig | None = Field(
        default_factory=SignificanceConfig,
        description="paired bootstrap settings; off (or false) for plain thresholds",
    )
    baseline: Path = Path("goldgate.baseline.json")
    on_golden_change: Literal["compare", "refuse"] = Field(
        default="compare",
        description="when the golden set changed since the baseline: compare on the examples"
        " both share and report the change, or refuse (exit 2) until it is re-blessed",
    )
    max_removed: int | None = Field(
        default=None,
        ge=0,
        description="at most this many golden examples may be removed or edited since the"
        " baseline (removals can hide a regression); more fails the suite",
    )
    report: ReportConfig = Field(default_factory=ReportConfig)
    engine: EngineConfig = Field(default_factory=EngineConfig)
    cache_dir: Path = Path(".goldgate")
    history: HistoryConfig | None = Field(
        default_factory=HistoryConfig, description="the run history; off (or false) for none"
    )
    anchor: AnchorConfig = Field(
        default_factory=AnchorConfig, description="the anchor of the max_drift rules"
    )
    root: Path = Field(default_factory=Path.cwd, description="not read from the file")
    source: Path | None = Field(default=None, description="not read from the file")

    @field_validator("significance", mode="before")
    @classmethod
    def _significance_switch(cls, value: Any) -> Any:
        return _switch(value)

    @field_validator("history", mode="before")
    @classmethod
    def _history_switch(cls, value: Any) -> Any:
        return _switch(value)

    @model_validator(mode="after")
    def _check_suites(self) -> Config:
        if not self.suites:
            raise _KeyedError("define at least one suite", ("suites",))
        for name, suite in self.suites.items():
            if not SUITE_NAME.match(name):
                raise _KeyedError(
                    f"suite name {name!r} may only hold letters, digits, '_', '.' and '-'",
                    ("suites", name),
                )
            if suite.system is None and self.system is None:
                raise _KeyedError(
                    f"suite {name!r} has no system: set a top-level 'system' or "
                    f"'suites.{name}.system'",
                    ("suites", name),
                )
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _resolve_paths(cls, data: Any, handler: Callable[[Any], Config]) -> Config:
        config = handler(data)
        root = config.root

        def resolve(path: Path) -> Path:
            return path if path.is_absolute() else root / path

        suites = {
            name: suite.model_copy(update={"goldens": resolve(suite.goldens)})
            for name, suite in config.suites.items()
        }
        history = config.history
        if history is not None:
            cache_dir = resolve(config.cache_dir)
            where = cache_dir / "history.sqlite" if history.path is None else resolve(history.path)
            history = history.model_copy(update={"path": where})
        return config.model_copy(
            update={
                "suites": suites,
                "history": history,
                "baseline": resolve(config.baseline),
                "cache_dir": resolve(config.cache_dir),
                "report": config.report.model_copy(update={"dir": resolve(config.report.dir)}),
            }
        )

    def without_cache(self) -> Config:
        """This configuration with every system's cache off (``--no-cache``)."""
        off = {"cache": "off"}
        suites = {
            name: suite.model_copy(update={"system": suite.system.model_copy(update=off)})
            if suite.system is not None
            else suite
            for name, suite in self.suites.items()
        }
        system = self.system.model_copy(update=off) if self.system is not None else None
        return self.model_copy(update={"system": system, "suites": suites})

    def system_for(self, suite: str) -> SystemConfig:
        """The system that produces outputs for ``suite``: its own, else the top-level one."""
        own = self.suites[suite].system
        system = own if own is not None else self.system
        if system is None:  # ruled out by validation; kept for type narrowing
            raise ConfigError(f"suite {suite!r} has no system")
        return system


_FILE_ONLY_KEYS = ("root", "source")


def load_config(
    path: str | os.PathLike[str] | None = None, *, cwd: str | os.PathLike[str] | None = None
) -> Config:
    """Read and validate the configuration (goldgate.yaml, else [tool.goldgate] in pyproject)."""
    base = Path.cwd() if cwd is None else Path(cwd)
    if path is not None:
        path = Path(path)
        if not path.is_absolute():
            path = base / path
    if path is None or path.is_dir():
        path = _find_config(path or base)
    text = _read_config_text(path)

    prefix: KeyPath = ()
    lines: dict[KeyPath, int] = {}
    if path.suffix == ".toml":
        data = _tool_table(_parse_toml(text, path), path).get("goldgate")
        if data is None:
            raise ConfigError(f"{path}: no [tool.goldgate] table")
        prefix = ("tool", "goldgate")
        lines = toml_key_lines(text, prefix)
    else:
        data, lines = load_yaml_with_lines(text, path, ConfigError)
        if data is None:
            raise ConfigError(f"{path}: the configuration is empty (start with 'version: 1')")
    if not isinstance(data, dict):
        where = dotted(prefix) or "the top level"
        raise ConfigError(f"{path}: {where} must be a mapping of keys, not {_kind(data)}")
    for key in _FILE_ONLY_KEYS:
        if key in data:
            _raise_at(path, lines, prefix, (key,), _unknown_key_message(key, Config))
    return parse_config(data, root=path.parent, source=path, lines=lines, prefix=prefix)


def parse_config(
    data: Mapping[str, Any],
    *,
    root: Path,
    source: Path,
    lines: Mapping[KeyPath, int] | None = None,
    prefix: KeyPath = (),
) -> Config:
    """Validate already-parsed configuration data; errors name ``source`` and the key path.

    ``root`` goes on ``sys.path`` (see :func:`importable_from`).
    """
    importable_from(root)
    try:
        return Config.model_validate({**data, "root": root, "source": source})
    except ValidationError as exc:
        raise _translate(exc, data, source, dict(lines or {}), prefix) from None


def _read_config_text(path: Path) -> str:
    """A configuration file's text: a regular file, of bounded size, in UTF-8."""
    try:
        raw = read_regular(path, ConfigError, what="configuration file", limit=MAX_CONFIG_BYTES)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not valid UTF-8 (byte {exc.start})") from None


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: malformed TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: malformed TOML: nested too deeply") from None


#: A TOML key: bare, "basic" or 'literal' parts joined by dots (the spec's grammar).
_TOML_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_TOML_DOTTED = rf"{_TOML_KEY}(?:[ \t]*\.[ \t]*{_TOML_KEY})*"
_TOML_HEADER = re.compile(rf"[ \t]*(\[\[?)[ \t]*({_TOML_DOTTED})[ \t]*\]\]?[ \t]*(?:#.*)?$")
_TOML_ASSIGN = re.compile(rf"[ \t]*({_TOML_DOTTED})[ \t]*=")
_TOML_STRING_OR_COMMENT = re.compile(r""""(?:[^"\\]|\\.)*"|'[^']*'|#.*""")


def toml_key_lines(text: str, prefix: KeyPath) -> dict[KeyPath, int]:
    """The line of every table header and ``key =`` under ``prefix``, keyed by the path
    below ``prefix`` (what ``line_of`` reads for the YAML configuration).

    ``tomllib`` keeps no positions, so the text is scanned once, line by line: headers
    (``[a.b]``, ``[[a.b]]``, counted per path as array elements) and assignments at the
    start of a line, outside multi-line strings and arrays. Each key is decoded by
    ``tomllib`` itself. Keys inside inline tables or multi-line arrays get no line of their
    own: an error there points at the line of the key that holds them.
    """
    found: dict[KeyPath, int] = {}
    table: KeyPath = ()  # the current table's path from the document's root
    counts: dict[KeyPath, int] = {}
    in_string: str | None = None  # the closing quotes of a multi-line string we are in
    depth = 0  # open brackets of a multi-line array
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string is not None:
            if line.count(in_string) % 2:
                in_string = None
            continue
        if depth == 0:
            header = _TOML_HEADER.match(line)
            if header:
                table = _toml_key(header.group(2))
                if header.group(1) == "[[":
                    index = counts.get(table, 0)
                    counts[table] = index + 1
                    table = (*table, index)
                for end in range(1, len(table) + 1):
                    found.setdefault(table[:end], number)  # and the tables it implies
                continue
            assign = _TOML_ASSIGN.match(line)
            if assign:
                path = (*table, *_toml_key(assign.group(1)))
                for end in range(len(table) + 1, len(path)):
                    found.setdefault(path[:end], number)  # the tables a dotted key makes
                found[path] = number
                line = line[assign.end() :]
        for quotes in ('"""', "'''"):
            if line.count(quotes) % 2:
                in_string = quotes
                break
        else:
            # Brackets outside strings and comments: an array may go on below.
            bare = _TOML_STRING_OR_COMMENT.sub("", line)
            depth = max(0, depth + bare.count("[") - bare.count("]"))
    return {
        path[len(prefix) :]: number
        for path, number in found.items()
        if len(path) > len(prefix) and path[: len(prefix)] == prefix
    }


def _toml_key(key: str) -> KeyPath:
    """``a."b c".d`` → ``('a', 'b c', 'd')``, decoded by ``tomllib`` as TOML decodes it."""
    try:
        node: Any = tomllib.loads(f"{key} = 0")
    except tomllib.TOMLDecodeError:  # not a key after all: the line gets no entry
        return ("",)
    path: list[str | int] = []
    while isinstance(node, dict) and len(node) == 1:
        ((name, node),) = node.items()
        path.append(name)
    return tuple(path)


def _tool_table(document: dict[str, Any], path: Path) -> dict[str, Any]:
    tool = document.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: 'tool' is not a table (it is {_kind(tool)})")
    return tool


def _find_config(base: Path) -> Path:
    # The nearest directory, from here up to the filesystem's root, as pytest and ruff look.
    for directory in (base, *base.resolve().parents):
        found = _config_in(directory)
        if found is not None:
            return found
    raise ConfigError(
        f"{base}: no goldgate.yaml here or in a parent directory (nor a [tool.goldgate] table"
        " in pyproject.toml); 'goldgate init' writes one"
    )


def _config_in(directory: Path) -> Path | None:
    for name in CONFIG_FILENAMES:
        candidate = directory / name
        if candidate.exists():
            return candidate
    pyproject = directory / PYPROJECT
    if pyproject.exists():
        # A pyproject.toml that cannot be read is reported as such: it may well hold the
        # [tool.goldgate] table the user means.
        tool = _tool_table(_parse_toml(_read_config_text(pyproject), pyproject), pyproject)
        if "goldgate" in tool:
            return pyproject
    return None


# -- turning pydantic's errors into messages a user can act on ------------------------------


def _translate(
    exc: ValidationError,
    data: Any,
    source: Path,
    lines: dict[KeyPath, int],
    prefix: KeyPath,
) -> GoldgateError:
    errors = exc.errors()
    # An unknown key is usually a misspelt known one, which is then reported missing too:
    # name the typo, not its consequence.
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    path, present = _data_path(error["loc"], data)
    message = _message(error, path, present)
    error_type: type[ConfigError] = ConfigError
    keyed = (error.get("ctx") or {}).get("error")
    if isinstance(keyed, _KeyedError):
        path = path + keyed.subpath
        message = keyed.message
        if keyed.metric:
            error_type = MetricError
    return _error_at(error_type, source, lines, prefix, path, message)


def _data_path(loc: tuple[int | str, ...], data: Any) -> tuple[KeyPath, bool]:
    """Keep the parts of pydantic's loc that exist in the data (drops union member labels).

    Returns the path and whether its last part is present in the data (False for a
    missing key, whose name is kept so the message can say which).
    """
    path: list[str | int] = []
    node = data
    for part in loc:
        if isinstance(node, Mapping) and str(part) in node:
            path.append(str(part))
            node = node[str(part)]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            path.append(part)
            node = node[part]
        elif isinstance(node, Mapping) and _is_field_name(part):
            path.append(str(part))
            return tuple(path), False
        else:
            continue
    return tuple(path), True


def _is_field_name(part: int | str) -> bool:
    return isinstance(part, str) and any(
        part in model.model_fields
        for model in (
            Config,
            SystemConfig,
            SuiteConfig,
            GateRule,
            SignificanceConfig,
            ReportConfig,
            HistoryConfig,
            AnchorConfig,
        )
    )


def _message(error: ErrorDetails, path: KeyPath, present: bool) -> str:
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        return _unknown_key_message(str(path[-1]), _model_at(path[:-1]))
    if kind == "missing" or not present:
        return "required key is missing"
    if kind == "literal_error" and isinstance(value, str):
        expected = str((error.get("ctx") or {}).get("expected", ""))
        choices = re.findall(r"'([^']*)'", expected)
        return f"{value!r} is not one of {expected}{did_you_mean(value, choices)}"
    msg = error["msg"].removeprefix("Value error, ")
    return f"{msg[:1].lower()}{msg[1:]} (got {_short(value)})"


def _unknown_key_message(key: str, model: type[BaseModel] | None) -> str:
    if model is None:
        return f"unknown key {key!r}"
    valid = [name for name in model.model_fields if name not in _FILE_ONLY_KEYS]
    return f"unknown key {key!r}{did_you_mean(key, valid)}; valid keys: {', '.join(valid)}"


def _model_at(path: KeyPath) -> type[BaseModel] | None:
    """The model that validates the mapping at ``path`` (to list its valid keys)."""
    annotation: Any = Config
    for part in path:
        model = _as_model(annotation)
        if model is not None:
            field = model.model_fields.get(str(part))
            if field is None:
                return None
            annotation = field.annotation
            continue
        if typing.get_origin(annotation) is dict:
            annotation = typing.get_args(annotation)[1]
            continue
        return None
    return _as_model(annotation)


def _as_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) not in (typing.Union, types.UnionType):
        return None
    for arg in typing.get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None


def _raise_at(
    source: Path, lines: Mapping[KeyPath, int], prefix: KeyPath, path: KeyPath, message: str
) -> typing.NoReturn:
    raise _error_at(ConfigError, source, lines, prefix, path, message)


def _error_at(
    error_type: type[ConfigError],
    source: Path,
    lines: Mapping[KeyPath, int],
    prefix: KeyPath,
    path: KeyPath,
    message: str,
) -> ConfigError:
    line = line_of(dict(lines), path)
    where = f"{source}:{line}" if line is not None else str(source)
    key = dotted(prefix + path)
    return error_type(f"{where}: {key}: {message}" if key else f"{where}: {message}")


def _kind(value: Any) -> str:
    return {list: "a list", str: "text", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- JSON Schema for editors -----------------------------------------------------------------


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema of goldgate.yaml, with the known metric names and their options."""
    schema = Config.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "goldgate configuration"
    for key in _FILE_ONLY_KEYS:
        schema["properties"].pop(key, None)
    defs = schema["$defs"]
    defs["SuiteConfig"]["properties"]["metrics"] = _metrics_schema()
    significance = schema["properties"]["significance"]
    significance["anyOf"] = [
        *significance.get("anyOf", []),
        {"const": False},
        {"const": "off"},
    ]
    significance.pop("default", None)
    history = schema["properties"]["history"]
    history["anyOf"] = [*history.get("anyOf", []), {"const": False}, {"const": "off"}]
    history.pop("default", None)
    return schema


def _metrics_schema() -> dict[str, Any]:
    from goldgate.metrics.registry import metric_names

    properties: dict[str, Any] = {}
    names = metric_names()
    for name in names:
        options = _options_schema(name)
        properties[name] = {"anyOf": [options, {"type": "null"}]}
    return {
        "type": "object",
        "description": "metric name (or package.module:function) → options",
        "minProperties": 1,
        "propertyNames": {"anyOf": [{"enum": names}, {"pattern": CALLABLE_PATH.pattern}]},
        "properties": properties,
        "additionalProperties": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    }


def _options_schema(name: str) -> dict[str, Any]:
    """A metric's options schema when its module imports; a plain object otherwise."""
    from goldgate.metrics.registry import _BUILTINS, _load_object

    target = _BUILTINS.get(name)
    try:
        cls = _load_object(target, name) if target else None
    except GoldgateError:
        cls = None
    if isinstance(cls, type) and issubclass(cls, Metric):
        return cls.Options.json_schema()
    return {"type": "object"}
