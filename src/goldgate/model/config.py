"""The configuration's models: goldgate.yaml (or ``[tool.goldgate]``) as frozen, validated data.

Each model checks what it can of itself; a check that points at a key below the model raises
:class:`KeyedError`, which :mod:`goldgate.model.config_errors` turns into a message naming the
file, the line and the key path. Reading the files is :mod:`goldgate.model.config_loading`'s.
A validated :class:`Config` holds absolute paths, resolved against its ``root``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

from goldgate.errors import ConfigError, MetricError, did_you_mean
from goldgate.io.yaml import KeyPath
from goldgate.metrics import PARALLEL_MIN_EXAMPLES
from goldgate.metrics.base import Metric

SUITE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
CALLABLE_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
#: fields of :class:`Config` set by the loader, never read from the file
FILE_ONLY_KEYS = ("root", "source")


class KeyedError(ValueError):
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
    concurrency: int = Field(
        default=8, ge=1, le=1024, description="at most this many inputs in flight at once"
    )
    # A bound, because the waits beneath (threading, subprocess) overflow on .inf or 1e12.
    timeout_s: float = Field(
        default=60.0,
        gt=0,
        le=7 * 24 * 3600,
        description="seconds to wait for each output; past it the run stops with an error",
    )
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
            raise KeyedError(f"set exactly one of predictions, command, callable ({found})")
        if self.command is not None:
            try:
                argv = self.argv()
            except ValueError as exc:
                raise KeyedError(f"cannot split the command: {exc}", ("command",)) from None
            if not argv or not all(argv):
                raise KeyedError("the command is empty", ("command",))
        if self.callable is not None and not CALLABLE_PATH.match(self.callable):
            raise KeyedError(
                f"expected 'package.module:function', got {self.callable!r}", ("callable",)
            )
        if self.predictions is not None and not self.predictions.strip():
            raise KeyedError("the predictions path is empty", ("predictions",))
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
            raise KeyedError(f"a gate rule needs at least one of {', '.join(checks)}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise KeyedError(f"min ({self.min}) is above max ({self.max})", ("min",))
        return self


class MustPassRule(_Model):
    """Examples that are contracts: each one selected (by tag or id) must score past the
    threshold on its own, whatever the aggregate does (see ``docs/how-to/must-pass.md``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    tags: list[str] = Field(
        default_factory=list, description="select the examples carrying any of these tags"
    )
    ids: list[str] = Field(default_factory=list, description="select these example ids")
    metric: str = Field(description="a metric of the suite, scored per example")
    min: float | None = Field(
        default=None,
        description="each selected example must score at least this (a metric where higher is"
        " better)",
    )
    max: float | None = Field(
        default=None,
        description="each selected example must score at most this (an error rate such as TER)",
    )

    @model_validator(mode="after")
    def _selection_and_threshold(self) -> MustPassRule:
        if not self.tags and not self.ids:
            raise KeyedError("a must_pass rule selects examples: give tags, ids or both")
        if (self.min is None) == (self.max is None):
            raise KeyedError(
                "a must_pass rule needs one threshold: min (higher is better) or max (lower is"
                " better, such as TER)"
            )
        return self

    def selects(self, example_id: str, tags: tuple[str, ...]) -> bool:
        """Whether the example with this id and these tags is one of the rule's."""
        return example_id in self.ids or any(tag in self.tags for tag in tags)

    def describe(self) -> str:
        """``exact_match >= 100 on tag critical`` for messages."""
        bound = f">= {self.min:g}" if self.min is not None else f"<= {self.max:g}"
        chosen = []
        if self.tags:
            chosen.append(f"tag{'s' if len(self.tags) > 1 else ''} {', '.join(self.tags)}")
        if self.ids:
            chosen.append(f"id{'s' if len(self.ids) > 1 else ''} {', '.join(self.ids)}")
        return f"{self.metric} {bound} on {' and '.join(chosen)}"


class SuiteConfig(_Model):
    """One golden set, the metrics computed on it and the gate over them."""

    goldens: Path = Field(
        description="golden set file: .jsonl, .yaml/.yml, .csv or .parquet; with engine.dask"
        " also a glob of many files or an fsspec URL (s3://..., file://...)"
    )
    metrics: dict[str, dict[str, Any]] = Field(
        description="metric name (or module:function) → options"
    )
    gate: dict[str, GateRule] = Field(
        default_factory=dict, description="metric name → the rules its score must pass"
    )
    system: SystemConfig | None = Field(
        default=None, description="this suite's own system (replaces the top-level one)"
    )
    slices: bool = Field(default=True, description="score each tag as a slice")
    must_pass: list[MustPassRule] = Field(
        default_factory=list,
        description="examples that must pass on their own (a rule, or a list of rules): a"
        " failure fails the suite however the aggregate moved, and is never forgiven as noise",
    )
    max_new: dict[str, int] = Field(
        default_factory=dict,
        description="category (failure mode) → how many examples may newly fall into it"
        " since the baseline: `{empty: 0, refusal: 0}` fails a system that starts returning"
        " empty outputs or refusing, whatever its scores",
    )
    max_new_slices: bool = Field(default=False, description="apply max_new to every tag slice too")
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

    @field_validator("must_pass", mode="before")
    @classmethod
    def _one_rule(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value

    @field_validator("max_new")
    @classmethod
    def _counts(cls, value: dict[str, int]) -> dict[str, int]:
        for name, count in value.items():
            if count < 0:
                raise KeyedError(f"max_new.{name} must be 0 or more, got {count}", (name,))
        return value

    @model_validator(mode="after")
    def _check_metrics_and_gate(self) -> SuiteConfig:
        if not self.metrics:
            raise KeyedError("a suite needs at least one metric", ("metrics",))
        from goldgate.metrics.registry import create_metric

        for name, options in self.metrics.items():
            try:
                create_metric(name, options)
            except MetricError as exc:
                raise KeyedError(str(exc), ("metrics", name), metric=True) from None
        for name in self.gate:
            if name not in self.metrics:
                hint = did_you_mean(name, list(self.metrics))
                known = ", ".join(self.metrics)
                raise KeyedError(
                    f"the gate names {name!r}, which is not a metric of this suite{hint}; "
                    f"its metrics: {known}",
                    ("gate", name),
                )
        for index, rule in enumerate(self.must_pass):
            self._check_must_pass(index, rule)
        return self

    def _check_must_pass(self, index: int, rule: MustPassRule) -> None:
        where: KeyPath = ("must_pass", index) if len(self.must_pass) > 1 else ("must_pass",)
        if rule.metric not in self.metrics:
            hint = did_you_mean(rule.metric, list(self.metrics))
            raise KeyedError(
                f"must_pass names {rule.metric!r}, which is not a metric of this suite{hint};"
                f" its metrics: {', '.join(self.metrics)}",
                (*where, "metric"),
            )
        from goldgate.metrics.registry import create_metric

        higher = create_metric(rule.metric, self.metrics[rule.metric]).higher_is_better
        if higher and rule.min is None:
            raise KeyedError(
                f"{rule.metric} is higher-is-better: a must_pass threshold on it is a min",
                (*where, "max"),
            )
        if not higher and rule.max is None:
            raise KeyedError(
                f"{rule.metric} is lower-is-better (an error rate): a must_pass threshold on it"
                " is a max",
                (*where, "min"),
            )

    def create_metrics(self) -> dict[str, Metric[Any]]:
        """Build this suite's metrics (name → Metric), in configuration order."""
        from goldgate.metrics.registry import create_metric

        return {name: create_metric(name, options) for name, options in self.metrics.items()}


class SignificanceConfig(_Model):
    """The paired bootstrap that tells a real drop from noise."""

    method: Literal["paired_bootstrap"] = Field(
        default="paired_bootstrap", description="how a drop is told from noise"
    )
    resamples: int = Field(
        default=1000, ge=1, le=1_000_000, description="bootstrap resamples of the golden set"
    )
    alpha: float = Field(
        default=0.05, gt=0, lt=1, description="a drop is real when its p-value is below this"
    )
    # numpy's generators refuse negative seeds
    seed: int = Field(
        default=0, ge=0, description="the bootstrap's seed: the same outputs give the same verdict"
    )


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


ReportFormat = Literal["md", "html", "json", "junit", "text", "metrics"]
ALL_REPORT_FORMATS: tuple[ReportFormat, ...] = ("md", "html", "json", "junit")


class ReportConfig(_Model):
    """Where reports are written and in which formats."""

    dir: Path = Field(
        default=Path("goldgate-report"), description="the folder the reports are written to"
    )
    formats: list[ReportFormat] = Field(
        default_factory=lambda: list(ALL_REPORT_FORMATS),
        description="which reports `goldgate run` writes",
    )


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


class ConfirmConfig(_Model):
    """Confirm a failing check by re-running the system on the examples that decided it
    (command and callable systems; see ``docs/how-to/confirm-reruns.md``)."""

    reruns: int = Field(
        default=2,
        ge=1,
        le=20,
        description="re-runs of the decisive examples; the failure stands only when the check"
        " fails again on every one of them",
    )
    max_examples: int = Field(
        default=20,
        ge=1,
        le=10_000,
        description="at most this many examples (the most worsened) are re-run per suite",
    )


class BudgetConfig(_Model):
    """What one run may spend on metrics that report a cost (``llm_judge``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    max_usd: float = Field(
        gt=0,
        description="stop (exit 2) before the call that would take this run's spend past this"
        " many US dollars; what was obtained stays cached",
    )


class LengthDriftConfig(_Model):
    """The ``length_drift`` detector's threshold."""

    ratio: float | None = Field(
        default=None,
        gt=1,
        le=1000,
        description="how many times longer or shorter (relative to its references) the output"
        " must be than the blessed output was before `length_drift` fires; default: the"
        " detector's own",
    )


class DiagnoseConfig(_Model):
    """The regression diagnosis: which failure-mode detectors run on every output."""

    detectors: list[str] = Field(
        default_factory=list,
        description="a project's own detectors, each `package.module:attribute` naming an"
        " object with `name`, `version` and `__call__(example, context)`",
    )
    disable: list[str] = Field(
        default_factory=list, description="built-in detectors not to run, by name"
    )
    length_drift: LengthDriftConfig = Field(default_factory=LengthDriftConfig)

    @model_validator(mode="after")
    def _known(self) -> DiagnoseConfig:
        from goldgate.diagnosis.registry import builtin_detector_names

        names = builtin_detector_names()
        for index, name in enumerate(self.disable):
            if name not in names:
                raise KeyedError(
                    f"no built-in detector {name!r}{did_you_mean(name, names)}; the built-in"
                    f" detectors: {', '.join(names)}",
                    ("disable", index),
                )
        for index, spec in enumerate(self.detectors):
            if not CALLABLE_PATH.match(spec):
                raise KeyedError(
                    f"expected 'package.module:attribute', got {spec!r}", ("detectors", index)
                )
        return self


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
    suites: dict[str, SuiteConfig] = Field(
        description="suite name → its golden set, metrics and gate"
    )
    systems: dict[str, SystemConfig] = Field(
        default_factory=dict,
        description="named candidate systems for `goldgate compare NAME NAME ...`, each"
        " shaped like `system`: compare runs each on every suite's golden set (cached as"
        " usual) and ranks them; a run or bless never uses them",
    )
    significance: SignificanceConfig | None = Field(
        default_factory=SignificanceConfig,
        description="paired bootstrap settings; off (or false) for plain thresholds",
    )
    baseline: Path = Field(
        default=Path("goldgate.baseline.json"),
        description="the blessed baseline file, committed with the golden sets",
    )
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
    cache_dir: Path = Field(
        default=Path(".goldgate"),
        description="outputs, embeddings, judgments and the run history are kept here",
    )
    history: HistoryConfig | None = Field(
        default_factory=HistoryConfig, description="the run history; off (or false) for none"
    )
    anchor: AnchorConfig = Field(
        default_factory=AnchorConfig, description="the anchor of the max_drift rules"
    )
    confirm: ConfirmConfig | None = Field(
        default=None,
        description="re-run a command or callable system on the examples behind a failing"
        " check before failing (nondeterministic systems)",
    )
    budget: BudgetConfig | None = Field(
        default=None, description="the most one run may spend on calls that report a cost"
    )
    diagnose: DiagnoseConfig | None = Field(
        default_factory=DiagnoseConfig,
        description="the regression diagnosis (failure modes of every output, why quality"
        " fell); off (or false) for none",
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

    @field_validator("diagnose", mode="before")
    @classmethod
    def _diagnose_switch(cls, value: Any) -> Any:
        return _switch(value)

    @model_validator(mode="after")
    def _check_suites(self) -> Config:
        if not self.suites:
            raise KeyedError("define at least one suite", ("suites",))
        for name, suite in self.suites.items():
            if not SUITE_NAME.match(name):
                raise KeyedError(
                    f"suite name {name!r} may only hold letters, digits, '_', '.' and '-'",
                    ("suites", name),
                )
            if suite.system is None and self.system is None:
                raise KeyedError(
                    f"suite {name!r} has no system: set a top-level 'system' or "
                    f"'suites.{name}.system'",
                    ("suites", name),
                )
            self._check_max_new(name, suite)
        for name in self.systems:
            if not SUITE_NAME.match(name):
                raise KeyedError(
                    f"system name {name!r} may only hold letters, digits, '_', '.' and '-'",
                    ("systems", name),
                )
        return self

    def _check_max_new(self, name: str, suite: SuiteConfig) -> None:
        if not suite.max_new:
            return
        if self.diagnose is None:
            raise KeyedError(
                "max_new needs the diagnosis, which `diagnose: off` turns off",
                ("suites", name, "max_new"),
            )
        from goldgate.diagnosis.registry import builtin_detector_names

        names = [n for n in builtin_detector_names() if n not in self.diagnose.disable]
        for category in suite.max_new:
            # a project's own detectors name themselves when imported: checked by the run
            if category in names or self.diagnose.detectors:
                continue
            off = " (turned off by diagnose.disable)" if category in self.diagnose.disable else ""
            raise KeyedError(
                f"max_new names {category!r}, which no detector finds{off}"
                f"{did_you_mean(category, names)}; the categories: {', '.join(names)}",
                ("suites", name, "max_new", category),
            )

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
