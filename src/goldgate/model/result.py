"""The result of a gate run: the one document every report and face reads.

It is decided completely before anything is rendered; reporters only display it. Written to
disk as versioned JSON (``schema_version``) and read back by ``goldgate report``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from goldgate.model.diagnosis import SuiteDiagnosis
from goldgate.model.example_table import ExampleResult, ExamplesField
from goldgate.model.examples_file import EXAMPLES_FILE, examples_file_bytes, read_examples_file
from goldgate.model.gate_records import BudgetUse, Confirmation, MustPassOutcome

#: /2: per-example rows may live in a side file (``examples_file``), not inline
RESULT_SCHEMA_VERSION = "goldgate.result/2"


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
        " | must_pass"
        " | max_new (its metric is then the category's name)"
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
    must_pass: MustPassOutcome | None = Field(
        default=None,
        description="a must_pass check's selected examples, each with its score (left out of"
        " the JSON for other rules)",
    )

    confirmation: str | None = Field(
        default=None,
        description="a check that failed, gated again on re-runs of the system (`confirm`):"
        " 'confirmed on 2 re-runs' (status fail) or 'not confirmed: ...' (status forgiven);"
        " left out of the JSON when not re-run",
    )

    @model_serializer(mode="wrap")
    def _leave_out_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("must_pass", "confirmation"):
            if getattr(self, key) is None:
                data.pop(key, None)
        return data

    @property
    def id(self) -> str:
        """A stable, readable identifier such as ``qa::exact_match::max_drop``."""
        rule = self.rule
        if self.must_pass is not None:
            rule = f"{rule}[{self.must_pass.selection}]"
        parts = [self.suite, self.metric, rule]
        if self.slice:
            parts.insert(2, f"tag={self.slice}")
        return "::".join(parts)


class SliceResult(_Model):
    """A tag slice of a suite: the examples carrying the tag, scored alone."""

    tag: str
    n_examples: int
    metrics: list[MetricSummary]


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
    examples: Annotated[Sequence[ExampleResult], ExamplesField] = Field(default_factory=list)
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
    confirmation: Confirmation | None = Field(
        default=None,
        description="set when failing checks were re-run to confirm them (`confirm`); left"
        " out of the JSON otherwise",
    )
    diagnosis: SuiteDiagnosis | None = Field(
        default=None,
        description="why quality moved: failure-mode categories on both sides, clusters,"
        " the headline and what changed since the baseline (absent with `diagnose: off`)",
    )


class SignificanceSettings(_Model):
    """How deltas were tested (None in the result when significance is off)."""

    method: str
    resamples: int
    alpha: float
    seed: int


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
    budget: BudgetUse | None = Field(
        default=None,
        description="the run's spend against `budget.max_usd`; left out of the JSON when no"
        " budget is configured",
    )
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
        return self.model_dump_json(indent=2, exclude=self._unset_keys()) + "\n"

    def _unset_keys(self) -> dict[Any, Any] | None:
        """The optional keys of the gate's extra rules (budget, a suite's confirmation) that
        this run did not set, left out of the JSON as if they did not exist. Left out here,
        by pydantic's own serializer, not by a Python hook that would build every example
        row of a large run as a dict first."""
        leave_out: dict[Any, Any] = {}
        if self.budget is None:
            leave_out["budget"] = True
        suites = {i: {"confirmation"} for i, s in enumerate(self.suites) if s.confirmation is None}
        if suites:
            leave_out["suites"] = suites
        return leave_out or None

    def to_files(
        self, examples_file: str = EXAMPLES_FILE, *, threads: int = 1
    ) -> tuple[str, bytes]:
        """``result.json`` without the examples, and the gzip JSON Lines that hold them.

        The JSON stays small whatever the golden set's size; the side file is compressed and
        byte-stable (no timestamp in its gzip header). With ``threads`` above 1 the rows are
        compressed in a thread of their own while the next ones are dumped: the same bytes.
        """
        data = examples_file_bytes(
            ((suite.name, suite.examples) for suite in self.suites), threads=threads
        )
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
        """This result with the examples of its side file put back into its suites (read as
        :func:`~goldgate.model.examples_file.read_examples_file` reads them)."""
        by_suite = read_examples_file(side, {s.name: s.n_examples for s in self.suites})
        suites = [s.model_copy(update={"examples": by_suite[s.name]}) for s in self.suites]
        return self.model_copy(update={"suites": suites, "examples_file": None})
