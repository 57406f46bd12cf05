"""The state of one pytest session for goldgate, and the run, checks and bless it coordinates.

The plugin (:mod:`goldgate.pytest.plugin`) only declares options and forwards hooks; this
module decides what runs and when. Outputs are obtained from each system exactly once and
written to predictions files in a scratch directory (:mod:`goldgate.pytest.outputs`); the
gate is then computed by :func:`goldgate.runner.run` from those files, and
``--goldgate-bless`` blesses from the same files, so blessing never calls the system a second
time. Under pytest-xdist the controller does this once and hands the result to the workers as
a JSON file in that directory; workers leave their checks and blesses there as files for the
controller. What pytest shows of a result is in :mod:`goldgate.pytest.rendering`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldgate.errors import GoldgateError, did_you_mean
from goldgate.pytest.outputs import (
    SystemSpec,
    obtain,
    system_settings,
    with_systems,
    write_predictions,
)
from goldgate.pytest.rendering import render_failure

if TYPE_CHECKING:
    # Imported where used: the plugin is imported by every pytest run in an environment that
    # has goldgate installed, and pydantic models cost a noticeable part of a second.
    from goldgate.model.config import Config, SystemConfig
    from goldgate.model.result import CheckResult, RunResult, SuiteResult

#: The id of the root of every goldgate test item: ``goldgate::<suite>::<metric>``.
ROOT_NAME = "goldgate"
#: The item of a suite that has no gate rules: it fails only when the suite cannot be scored.
UNGATED_ITEM = "scored"
#: The xdist ``workerinput`` key naming the directory shared by the controller and workers.
WORKDIR_KEY = "goldgate_workdir"
HANDOFF_FILE = "run.json"
BLESS_QUEUE = "bless"
#: fixture and marker checks made by xdist workers, for the controller's one history row
CHECK_QUEUE = "checks"


class GateFailed(AssertionError):
    """A suite's gate failed; ``text`` is the readable report pytest shows."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class Crashed(Exception):
    """goldgate crashed (a bug, exit 3): ``text`` is the one line naming the saved traceback.

    Not a :class:`GoldgateError`, which is bad input, nor a :class:`GateFailed`: the plugin
    shows the line and ends the session with pytest's exit code 3, never as a failed gate.
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


@dataclass(frozen=True)
class Settings:
    """The plugin's options after command line and ini values are merged."""

    enabled: bool = False
    bless: bool = False
    #: with ``bless``: accept a failed gate check (recorded in the baseline as forced)
    allow_regression: bool = False
    #: goldgate item ids named on the command line (``goldgate::qa``); empty selects all
    item_ids: tuple[str, ...] = ()
    config_path: Path | None = None
    report_dir: Path | None = None
    rootdir: Path = field(default_factory=Path.cwd)


@dataclass
class Outcome:
    """The session's run of the configured suites: a result, or why there is none."""

    result: RunResult | None = None
    error: str | None = None
    #: the error is a crash (exit 3), not bad input
    internal: bool = False

    def to_json(self) -> str:
        """The handoff document read by xdist workers."""
        result = None if self.result is None else self.result.model_dump(mode="json")
        return json.dumps({"result": result, "error": self.error, "internal": self.internal})

    @classmethod
    def from_json(cls, text: str) -> Outcome:
        """Read what :meth:`to_json` wrote."""
        from goldgate.model.result import RunResult

        data = json.loads(text)
        result = data.get("result")
        return cls(
            result=None if result is None else RunResult.model_validate(result),
            error=data.get("error"),
            internal=data.get("internal") is True,
        )


@dataclass(frozen=True)
class ItemSpec:
    """One test item: a suite and one gated metric of it (None for an ungated suite)."""

    suite: str
    metric: str | None

    @property
    def name(self) -> str:
        """The item's name under its suite."""
        return self.metric if self.metric is not None else UNGATED_ITEM


class GoldgateSession:
    """Per-run state: the configuration, the run of the suites, fixture checks, blessing."""

    def __init__(
        self, settings: Settings, *, is_worker: bool = False, workdir: Path | None = None
    ) -> None:
        self.settings = settings
        #: True in a pytest-xdist worker, which reads the controller's run
        self.is_worker = is_worker
        #: on an xdist worker: the controller's directory (holding the handoff)
        self.shared_workdir = workdir
        self._config: Config | None = None
        self._workdir: Path | None = None
        self._owned_workdir = False
        self._outcome: Outcome | None = None
        self._replayed: Config | None = None
        self._blessable: list[str] = []
        self.selected: list[str] = []
        #: (test id, suite result) of every fixture or marker check, in order
        self.checks: list[tuple[str, SuiteResult]] = []
        #: each check's result and the system it evaluated, for the session's history row
        self._checked: list[tuple[SuiteResult, SystemConfig]] = []
        self.messages: list[str] = []
        self.bless_failed = False
        #: why the bless at session end was refused (None when it was not)
        self.bless_error: str | None = None
        #: goldgate crashed in this session (seen here or in an xdist worker's report)
        self.crashed = False

    # -- configuration --------------------------------------------------------------------

    def config(self) -> Config:
        """The loaded configuration (``ConfigError`` when it is invalid or missing)."""
        if self._config is None:
            from goldgate.model.config_loading import load_config

            config = load_config(self.settings.config_path, cwd=self.settings.rootdir)
            if self.settings.report_dir is not None:
                report = config.report.model_copy(update={"dir": self.settings.report_dir})
                config = config.model_copy(update={"report": report})
            self._config = config
        return self._config

    def item_specs(self) -> list[ItemSpec]:
        """One item per gated metric of every suite, in configuration order."""
        specs: list[ItemSpec] = []
        for name, suite in self.config().suites.items():
            # a metric held only by must_pass rules gets its item too
            gated = dict.fromkeys([*suite.gate, *(rule.metric for rule in suite.must_pass)])
            if gated:
                specs += [ItemSpec(name, metric) for metric in gated]
            else:
                specs.append(ItemSpec(name, None))
        return specs

    def select(self, suites: Iterable[str]) -> None:
        """Remember which suites have items left after ``-k``, ``--lf`` and deselection."""
        self.selected = list(dict.fromkeys(suites))

    # -- scratch space --------------------------------------------------------------------

    def workdir(self) -> Path:
        """A directory for predictions and the xdist handoff, removed by :meth:`close`."""
        if self.shared_workdir is not None:
            return self.shared_workdir
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="goldgate-pytest-"))
            self._owned_workdir = True
        return self._workdir

    def close(self) -> None:
        """Remove the scratch directory this process created."""
        if self._owned_workdir and self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    # -- the run of the configured suites -------------------------------------------------

    @property
    def outcome(self) -> Outcome | None:
        """The run, if this process has made or read it."""
        return self._outcome

    def suite_result(self, suite: str) -> SuiteResult:
        """The result of ``suite``, running every selected suite on first use."""
        outcome = self._ensure_outcome()
        if outcome.error is not None:
            raise Crashed(outcome.error) if outcome.internal else GoldgateError(outcome.error)
        if outcome.result is not None:
            for found in outcome.result.suites:
                if found.name == suite:
                    return found
        raise GoldgateError(f"suite {suite!r} was not run (selected: {', '.join(self.selected)})")

    def _ensure_outcome(self) -> Outcome:
        if self._outcome is None:
            if self.is_worker:
                self._outcome = self._read_handoff()
            else:
                self._outcome = self.compute(self.selected)
        return self._outcome

    def _crashed(self, exc: BaseException) -> Outcome:
        # A bug, not bad input: keep the traceback in a file, and never run the suites twice.
        from goldgate.crash import crash_message, is_crash, save_traceback

        if not is_crash(exc):
            raise exc
        return Outcome(error=crash_message(exc, save_traceback(exc)), internal=True)

    def compute_for_ids(self, node_ids: Sequence[str]) -> None:
        """On the xdist controller: run the suites of the collected items and publish."""
        if self._outcome is not None:
            return
        prefix = ROOT_NAME + "::"
        suites = [nid.split("::")[1] for nid in node_ids if nid.startswith(prefix)]
        if not suites:
            return
        self.select(suites)
        self._outcome = self.compute(self.selected)
        path = self.workdir() / HANDOFF_FILE
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(self._outcome.to_json(), encoding="utf-8")
        temporary.replace(path)

    def _read_handoff(self) -> Outcome:
        path = self.workdir() / HANDOFF_FILE
        try:
            return Outcome.from_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return Outcome(error=f"the xdist controller published no goldgate run ({path})")

    def compute(self, suites: Sequence[str]) -> Outcome:
        """Obtain each suite's outputs once, gate them and write the reports."""
        from goldgate.pipeline.record import write_result
        from goldgate.runner import run

        try:
            config = self.config()
            replays: dict[str, SystemConfig] = {}
            failures: dict[str, str] = {}
            for name in suites:
                try:
                    outputs = obtain(config, name, config.system_for(name))
                except GoldgateError as exc:
                    failures[name] = str(exc)
                    continue
                replays[name] = self._replay_system(name, outputs)
            replayed = with_systems(config, replays)
            # The history gets one row for the whole session, written by finish().
            result = run(replayed, suites=list(replays), write_reports=False, history_source=None)
            result = _with_failures(config, result, failures)
            write_result(result, config.report.dir, list(config.report.formats))
        except GoldgateError as exc:
            return Outcome(error=str(exc))
        except BaseException as exc:  # a Rust tokenizer's PanicException is one
            return self._crashed(exc)
        self._replayed = replayed
        self._blessable = list(replays)
        return Outcome(result=result)

    def _replay_system(self, suite: str, outputs: dict[str, list[str]]) -> SystemConfig:
        directory = self.workdir() / "replay"
        directory.mkdir(exist_ok=True)
        # A file of its own per call: xdist workers share this directory.
        handle, name = tempfile.mkstemp(prefix=f"{suite}-", suffix=".jsonl", dir=directory)
        os.close(handle)
        return write_predictions(Path(name), outputs)

    # -- fixture and marker checks --------------------------------------------------------

    def check(
        self,
        suite: str,
        *,
        system: SystemSpec | None = None,
        overrides: Mapping[str, Any] | None = None,
        test_id: str = "",
    ) -> SuiteResult:
        """Evaluate ``system`` on ``suite``; raise :class:`GateFailed` when the gate fails."""
        from goldgate.model.result import Verdict
        from goldgate.runner import run

        config = self.config()
        if suite not in config.suites:
            hint = did_you_mean(suite, list(config.suites))
            raise GoldgateError(
                f"no suite {suite!r} in {config.source}{hint}; suites: {', '.join(config.suites)}"
            )
        configured = config.system_for(suite)
        function, settings = system_settings(configured, system, overrides or {})
        try:
            outputs = obtain(config, suite, settings, function=function)
            replay = self._replay_system(suite, outputs)
            replayed = with_systems(config, {suite: replay})
            result = run(replayed, suites=[suite], write_reports=False, history_source=None)
        except GoldgateError:
            raise
        except BaseException as exc:
            crashed = self._crashed(exc)
            raise Crashed(crashed.error or "") from None
        suite_result = result.suites[0]
        self.checks.append((test_id, suite_result))
        self._remember_check(test_id, suite_result, settings)
        if suite_result.error is not None:
            raise GoldgateError(suite_result.error)
        if self.settings.bless:
            # Queued even when it regressed: the bless at session end refuses it (as
            # ``goldgate bless`` does) unless --goldgate-allow-regression, and says so.
            self._queue_bless(suite, replay, test_id)
        if suite_result.verdict is Verdict.REGRESSED and not self.settings.allow_regression:
            raise GateFailed(render_failure(suite_result, _failed(suite_result.checks), result))
        return suite_result

    def _remember_check(self, test_id: str, suite: SuiteResult, system: SystemConfig) -> None:
        """Keep a check for the session's history row (on a worker: for the controller)."""
        if not self.is_worker:
            self._checked.append((suite, system))
            return
        queue = self.workdir() / CHECK_QUEUE
        queue.mkdir(exist_ok=True)
        entry = {
            "test": test_id,
            "system": system.model_dump(mode="json"),
            "result": suite.model_dump(mode="json"),
        }
        name = hashlib.sha256(f"{test_id}\0{suite.name}".encode()).hexdigest()[:16]
        (queue / f"{name}.json").write_text(json.dumps(entry), encoding="utf-8")

    def _queue_bless(self, suite: str, replay: SystemConfig, test_id: str) -> None:
        # Queued as files so that the controller blesses what xdist workers checked.
        queue = self.workdir() / BLESS_QUEUE
        queue.mkdir(exist_ok=True)
        entry = {"suite": suite, "system": replay.model_dump(mode="json"), "test": test_id}
        name = hashlib.sha256(f"{test_id}\0{suite}".encode()).hexdigest()[:16]
        (queue / f"{name}.json").write_text(json.dumps(entry), encoding="utf-8")

    # -- the end of the session -----------------------------------------------------------

    def finish(self, *, interrupted: bool) -> None:
        """Record the session in the history, then bless what it ran when asked to (both
        once, on the controller or a lone process)."""
        if self.is_worker:
            return
        self._record_history()
        if self.settings.bless and not interrupted:
            self._bless()

    def _record_history(self) -> None:
        """One history row for the session: the configured run's suites, then each suite
        only a fixture or marker check evaluated (its first check, in test order)."""
        from goldgate._version import __version__
        from goldgate.gate.rules import combine_verdicts
        from goldgate.history.recording import record_run
        from goldgate.model.config import SystemConfig
        from goldgate.model.result import RunResult, SuiteResult

        checked = list(self._checked)
        for entry in self._queue(CHECK_QUEUE):
            # Not validated again: a Python function's label (``test_x:<lambda>``) is no
            # importable path, and only the history's fingerprint reads it.
            system = SystemConfig.model_construct(**entry["system"])
            checked.append((SuiteResult.model_validate(entry["result"]), system))
        template = self._outcome.result if self._outcome is not None else None
        try:
            config = self.config()
        except GoldgateError:
            return
        found: dict[str, SuiteResult] = {}
        systems: dict[str, SystemConfig] = {}
        if template is not None:
            for suite in template.suites:
                found[suite.name] = suite
                systems[suite.name] = config.system_for(suite.name)
        for suite, system in checked:
            if suite.name not in found:
                found[suite.name] = suite
                systems[suite.name] = system
        if not found:
            return
        suites = [found[name] for name in config.suites if name in found]
        verdict = combine_verdicts([suite.verdict for suite in suites])
        if template is not None:
            result = template.model_copy(update={"suites": suites, "verdict": verdict})
        else:
            result = RunResult(
                goldgate_version=__version__,
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                verdict=verdict,
                suites=suites,
            )
        # The systems as they were given (not the replay files in the scratch directory),
        # so that the history's system fingerprint is the same from one session to the next.
        self.messages += record_run(result, with_systems(config, systems), source="pytest")

    def _bless(self) -> None:
        """One bless of every suite the session evaluated, as ``goldgate bless`` does: a
        failed gate check refuses it unless --goldgate-allow-regression, which records the
        bless as forced."""
        from goldgate.model.config import SystemConfig
        from goldgate.runner import bless_reviewed

        try:
            conflict = self._conflicting_blesses()
            if conflict is not None:
                self._refuse(conflict)
                return
            systems: dict[str, SystemConfig] = {}
            origins: list[tuple[str, str | None]] = []  # (suite, test id or None: configured)
            if self._replayed is not None:
                for suite in self._blessable:
                    systems[suite] = self._replayed.system_for(suite)
                    origins.append((suite, None))
            for entry in self._bless_queue():
                suite = entry["suite"]
                systems.setdefault(suite, SystemConfig(**entry["system"]))
                origins.append((suite, entry["test"]))
            if not systems:
                return
            config = with_systems(self.config(), systems)
            # Every suite blessed at once may replace a damaged baseline, as a full bless does.
            every = set(systems) == set(config.suites)
            # All suites in one write: a second write of a suite would be reviewed against
            # the first and lose what the first recorded as forced.
            outcome = bless_reviewed(
                config,
                suites=None if every else list(systems),
                allow_regression=self.settings.allow_regression,
                rerun=True,
            )
        except GoldgateError as exc:
            self._refuse(str(exc))
            return
        except BaseException as exc:
            self.crashed = True
            self.messages.append(f"could not bless: {self._crashed(exc).error}")
            return
        if not outcome.written:
            failed = sum(len(messages) for messages in outcome.failed.values())
            details = "; ".join(m for messages in outcome.failed.values() for m in messages)
            self._refuse(
                f"{failed} gate check{'s' if failed != 1 else ''} failed in"
                f" {', '.join(outcome.failed)} ({details}); the baseline {outcome.path} is"
                " unchanged. Fix the regression, or accept it with --goldgate-bless"
                " --goldgate-allow-regression (the baseline then records the bless as forced)"
            )
            return
        configured = [suite for suite, test in origins if test is None]
        if configured:
            forced = _forced([suite for suite in configured if suite in outcome.failed])
            self.messages.append(f"blessed {', '.join(configured)} into {outcome.path}{forced}")
        for suite, test in origins:
            if test is not None:
                forced = _forced([suite] if suite in outcome.failed else [])
                self.messages.append(f"blessed {suite} (from {test}) into {outcome.path}{forced}")

    def _refuse(self, reason: str) -> None:
        self.bless_failed = True
        self.bless_error = f"could not bless: {reason}"
        self.messages.append(self.bless_error)

    def _conflicting_blesses(self) -> str | None:
        """Two tests blessing one suite from different outputs: which one wins is no choice."""
        sources: dict[str, list[tuple[str, str]]] = {}
        if self._replayed is not None:
            for suite in self._blessable:
                path = self._replayed.system_for(suite).predictions or ""
                sources.setdefault(suite, []).append((f"{ROOT_NAME}::{suite}", path))
        for entry in self._bless_queue():
            path = str(entry["system"].get("predictions") or "")
            sources.setdefault(entry["suite"], []).append((entry["test"], path))
        problems = []
        for suite, found in sources.items():
            first_test, first_path = found[0]
            first = Path(first_path).read_bytes()
            for test, path in found[1:]:
                if Path(path).read_bytes() != first:
                    problems.append(
                        f"suite {suite!r} is blessed by {first_test} and by {test} from"
                        " different systems (their outputs differ)"
                    )
                    break
        if not problems:
            return None
        return (
            "; ".join(problems)
            + "; nothing was blessed: bless one of them at a time (select it with -k)"
        )

    def _bless_queue(self) -> list[dict[str, Any]]:
        return sorted(self._queue(BLESS_QUEUE), key=lambda entry: (entry["test"], entry["suite"]))

    def _queue(self, name: str) -> list[dict[str, Any]]:
        """The entries xdist workers (or this process) left in a queue directory, by test."""
        directory = self.workdir() / name
        if not directory.is_dir():
            return []
        entries = [json.loads(p.read_text(encoding="utf-8")) for p in directory.glob("*.json")]
        return sorted(entries, key=lambda entry: str(entry["test"]))


def _with_failures(config: Config, result: RunResult, failures: Mapping[str, str]) -> RunResult:
    """Put suites whose system failed back into the result, in configuration order."""
    if not failures:
        return result
    from goldgate.gate.rules import combine_verdicts
    from goldgate.pipeline.record import failed_suite

    done = {suite.name: suite for suite in result.suites}
    suites: list[SuiteResult] = []
    for name in config.suites:
        if name in done:
            suites.append(done[name])
        elif name in failures:
            suites.append(failed_suite(config, name, failures[name]))
    return result.model_copy(
        update={
            "suites": suites,
            "verdict": combine_verdicts([suite.verdict for suite in suites]),
            "errors": [*result.errors, *failures.values()],
        }
    )


def _forced(suites: Sequence[str]) -> str:
    """`` (forced past qa)`` after a bless that accepted failed checks, as the CLI says."""
    return f" (forced past {', '.join(suites)})" if suites else ""


def _failed(checks: Iterable[CheckResult]) -> list[CheckResult]:
    from goldgate.model.result import CheckStatus

    return [check for check in checks if check.status is CheckStatus.FAIL]


def failed_checks(suite: SuiteResult, metric: str | None) -> list[CheckResult]:
    """The failed checks of one item (one metric, or the whole suite when None)."""
    return _failed(c for c in suite.checks if metric is None or c.metric == metric)
