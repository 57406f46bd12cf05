"""goldgate's pytest plugin (registered through the ``pytest11`` entry point).

``pytest --goldgate`` adds one test item per gated metric of every configured suite
(``goldgate::qa::exact_match``); the suites run once, on the first such item (on the xdist
controller, before tests are handed out). The ``goldgate`` fixture and the
``@pytest.mark.goldgate(suite=...)`` marker evaluate a Python callable against a suite.
The work is done by :class:`goldgate.pytest.session.GoldgateSession`, kept in ``config.stash``.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from goldgate.errors import GoldgateError, did_you_mean
from goldgate.pytest.outputs import SystemSpec
from goldgate.pytest.rendering import render_failure, render_summary
from goldgate.pytest.session import (
    ROOT_NAME,
    WORKDIR_KEY,
    Crashed,
    GateFailed,
    GoldgateSession,
    ItemSpec,
    Settings,
    failed_checks,
)
from goldgate.terminal import console

if TYPE_CHECKING:
    from goldgate.model.config import Config
    from goldgate.model.result import SuiteResult

SESSION_KEY = pytest.StashKey[GoldgateSession]()
#: the user property of a test report that tells the session goldgate crashed there (it
#: travels from xdist workers to the controller with the report)
CRASH_PROPERTY = "goldgate_internal_error"
FIXTURE = "goldgate"
MARKER = "goldgate"
#: the id of the failure reported when the bless at session end is refused
BLESS_NODE = f"{ROOT_NAME}-bless"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare goldgate's command-line and ini options."""
    group = parser.getgroup("goldgate", "text-generation quality gate")
    group.addoption(
        "--goldgate",
        action="store_true",
        default=None,
        help="collect the configured goldgate suites' gate checks as test items",
    )
    group.addoption(
        "--goldgate-config",
        metavar="PATH",
        default=None,
        help="goldgate configuration file (default: goldgate.yaml or pyproject.toml in rootdir)",
    )
    group.addoption(
        "--goldgate-bless",
        action="store_true",
        default=False,
        help="like --goldgate, but accept today's scores: write the baseline at session end"
        " (refusing a regression unless --goldgate-allow-regression)",
    )
    group.addoption(
        "--goldgate-allow-regression",
        action="store_true",
        default=False,
        help="with --goldgate-bless: accept scores that fail a gate check; the baseline"
        " records that the bless was forced",
    )
    group.addoption(
        "--goldgate-report-dir",
        metavar="DIR",
        default=None,
        help="write goldgate's reports here instead of the configured report.dir",
    )
    parser.addini("goldgate", "always collect goldgate's gate checks", type="bool", default=False)
    parser.addini("goldgate_config", "goldgate configuration file (relative to the ini file)")
    parser.addini("goldgate_report_dir", "goldgate report directory (relative to the ini file)")


def _settings(config: pytest.Config) -> Settings:
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    invoked = config.invocation_params.dir

    def path_option(option: str, ini: str) -> Path | None:
        given = config.getoption(option)
        if given:
            return invoked / str(given)
        from_ini = str(config.getini(ini) or "")
        return base / from_ini if from_ini else None

    bless = bool(config.getoption("goldgate_bless"))
    allow_regression = bool(config.getoption("goldgate_allow_regression"))
    if allow_regression and not bless:
        raise pytest.UsageError("goldgate: --goldgate-allow-regression applies to --goldgate-bless")
    enabled = config.getoption("goldgate")
    item_ids = _take_item_ids(config)
    return Settings(
        enabled=bool(enabled if enabled is not None else config.getini("goldgate"))
        or bless
        or bool(item_ids),
        bless=bless,
        allow_regression=allow_regression,
        item_ids=item_ids,
        config_path=path_option("goldgate_config", "goldgate_config"),
        report_dir=path_option("goldgate_report_dir", "goldgate_report_dir"),
        rootdir=config.rootpath,
    )


def _take_item_ids(config: pytest.Config) -> tuple[str, ...]:
    """Take goldgate item ids (``goldgate::qa::exact_match``) out of the arguments.

    They name no file, so pytest would refuse them ("file or directory not found"); taken
    out here, before collection, they select goldgate's items instead. Every xdist worker
    is given the same arguments and takes the same ids. A file or directory that is really
    named ``goldgate`` stays a path.
    """
    invoked = config.invocation_params.dir
    ids = tuple(
        arg
        for arg in config.args
        if arg.startswith(ROOT_NAME + "::")
        or (arg == ROOT_NAME and not (invoked / ROOT_NAME).exists())
    )
    if ids:
        config.args[:] = [arg for arg in config.args if arg not in ids]
    return ids


def _session(config: pytest.Config) -> GoldgateSession:
    return config.stash[SESSION_KEY]


def _usage_error(exc: GoldgateError) -> pytest.UsageError:
    return pytest.UsageError(console.clean(f"goldgate: {exc}"))


def _load_config(session: GoldgateSession) -> Config:
    """The configuration; a bad one is a usage error (exit 4), a crash exits 3 in one line."""
    try:
        return session.config()
    except GoldgateError as exc:
        raise _usage_error(exc) from None
    except BaseException as exc:  # a Rust tokenizer's PanicException is one
        # A bug, not a usage error: one line naming the saved traceback and pytest's exit 3
        # (its INTERNAL_ERROR), instead of an INTERNALERROR page.
        from goldgate.crash import EXIT_INTERNAL, crash_message, is_crash, save_traceback

        if not is_crash(exc):
            raise
        message = console.clean(crash_message(exc, save_traceback(exc)))
        pytest.exit(message, returncode=EXIT_INTERNAL)


def pytest_configure(config: pytest.Config) -> None:
    """Create the session; with --goldgate, load the configuration now (errors are usage)."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(suite, system=None, **settings): after the test body, evaluate `system` "
        "(a callable, 'module:function' or the configured system) on the suite and assert "
        "its gate",
    )
    workerinput = getattr(config, "workerinput", None)
    shared = workerinput.get(WORKDIR_KEY) if workerinput is not None else None
    session = GoldgateSession(
        _settings(config),
        is_worker=workerinput is not None,
        workdir=Path(shared) if shared else None,
    )
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(CrashWatch(session), "goldgate-crash-watch")
    if session.settings.enabled:
        _load_config(session)
        # An id that names no item stops the run here, before xdist starts any worker.
        _wanted_specs(session.item_specs(), session.settings.item_ids)
        if workerinput is None and config.pluginmanager.hasplugin("xdist"):
            config.pluginmanager.register(XdistHooks(session), "goldgate-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the scratch directory."""
    if SESSION_KEY in config.stash:
        _session(config).close()


class CrashWatch:
    """Every process: notice a test report that says goldgate crashed (see CRASH_PROPERTY).

    On the xdist controller this sees the workers' reports too, so a crash in a worker's
    fixture check still ends the whole session with exit code 3.
    """

    def __init__(self, session: GoldgateSession) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Remember a crash reported by a test."""
        if any(name == CRASH_PROPERTY for name, _ in report.user_properties):
            self.session.crashed = True


class XdistHooks:
    """Controller-side hooks: run the suites once and hand the result to every worker."""

    def __init__(self, session: GoldgateSession) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        """Tell each worker where the controller publishes its run."""
        node.workerinput[WORKDIR_KEY] = str(self.session.workdir())

    def pytest_xdist_node_collection_finished(self, node: Any, ids: Sequence[str]) -> None:
        """Before any test is scheduled: run the suites the collected items need."""
        self.session.compute_for_ids(ids)


# -- collection -----------------------------------------------------------------------------


class GoldgateRoot(pytest.Collector):
    """The ``goldgate`` node that holds one collector per suite."""

    def __init__(self, *, specs: Sequence[ItemSpec], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.specs = list(specs)

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """One collector per suite."""
        suites = list(dict.fromkeys(spec.suite for spec in self.specs))
        return [
            GoldgateSuite.from_parent(
                self, name=suite, specs=[s for s in self.specs if s.suite == suite]
            )
            for suite in suites
        ]


class GoldgateSuite(pytest.Collector):
    """One suite: an item per gated metric."""

    def __init__(self, *, specs: Sequence[ItemSpec], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.specs = list(specs)

    def collect(self) -> list[pytest.Item | pytest.Collector]:
        """One item per gated metric."""
        return [GoldgateItem.from_parent(self, name=spec.name, spec=spec) for spec in self.specs]


class GoldgateItem(pytest.Item):
    """The gate checks of one metric of one suite (all rules, all tag slices)."""

    def __init__(self, *, spec: ItemSpec, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec

    def runtest(self) -> None:
        """Fail when a check of this metric failed; skip when none could be evaluated."""
        from goldgate.model.result import CheckStatus

        session = _session(self.config)
        suite = session.suite_result(self.spec.suite)
        if suite.error is not None:
            raise GoldgateError(f"suite {suite.name!r}: {suite.error}")
        checks = [c for c in suite.checks if self.spec.metric in (None, c.metric)]
        failed = failed_checks(suite, self.spec.metric)
        for check in checks:
            self.user_properties.append((check.id, check.status.value))
        if session.settings.allow_regression:
            return  # today's scores are being accepted, failed checks included
        if failed:
            outcome = session.outcome
            raise GateFailed(render_failure(suite, failed, outcome.result if outcome else None))
        if session.settings.bless:
            return  # today's scores are being accepted: nothing to skip
        if checks and all(c.status is CheckStatus.SKIPPED for c in checks):
            pytest.skip(console.clean(checks[0].message))

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        """goldgate's own text for gate failures and library errors, no traceback."""
        if isinstance(excinfo.value, GateFailed | Crashed):
            return console.clean(excinfo.value.text)
        if isinstance(excinfo.value, GoldgateError):
            return console.clean(f"goldgate: {excinfo.value}")
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the check is configured."""
        return self.path, None, self.nodeid


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Append goldgate's items (before -k, -m and --lf select), and check fixture users."""
    state = _session(config)
    marked = [item for item in items if item.get_closest_marker(MARKER) is not None]
    uses = marked or any(FIXTURE in getattr(item, "fixturenames", ()) for item in items)
    # On an xdist worker a usage error is an internal error of the whole run: there the same
    # problems fail the tests concerned instead, with the same message.
    if uses and not state.is_worker:
        suites = _load_config(state).suites
        for item in marked:
            suite = _marker_check(item)[0]
            if suite not in suites:
                raise pytest.UsageError(
                    console.clean(
                        f"{item.nodeid}: @pytest.mark.{MARKER}: no suite {suite!r} in"
                        f" {state.config().source}{did_you_mean(suite, list(suites))}"
                    )
                )
    if not state.settings.enabled:
        return
    goldgate_config = state.config()
    root = GoldgateRoot.from_parent(
        session,
        name=ROOT_NAME,
        nodeid=ROOT_NAME,
        path=goldgate_config.source or goldgate_config.root,
        specs=_wanted_specs(state.item_specs(), state.settings.item_ids),
    )
    # genitems sends the usual collection hooks, so counts and --collect-only include them.
    items.extend(session.genitems(root))


def _wanted_specs(specs: list[ItemSpec], wanted: Sequence[str]) -> list[ItemSpec]:
    """The items the ids given on the command line name (all when none was given); an id
    that names none is a usage error, as pytest's own "not found" is."""
    if not wanted:
        return specs
    ids = {f"{ROOT_NAME}::{spec.suite}::{spec.name}": spec for spec in specs}
    for node in wanted:
        if not any(_names(nodeid, node) for nodeid in ids):
            choices = list(dict.fromkeys(nid.rsplit("::", 1)[0] for nid in ids)) + list(ids)
            raise pytest.UsageError(
                console.clean(f"goldgate: no item {node}{did_you_mean(node, choices)}")
            )
    return [spec for nodeid, spec in ids.items() if any(_names(nodeid, n) for n in wanted)]


def _names(nodeid: str, wanted: str) -> bool:
    """Whether the id given on the command line selects the item (itself or a parent)."""
    return nodeid == wanted or nodeid.startswith(wanted + "::")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Remember which suites still have items after selection."""
    state = _session(session.config)
    state.select(item.spec.suite for item in session.items if isinstance(item, GoldgateItem))


# -- the fixture and the marker -------------------------------------------------------------


class GoldgateChecker:
    """What the ``goldgate`` fixture gives a test: ``check(suite, system=...)``."""

    def __init__(self, session: GoldgateSession, test_id: str) -> None:
        self._session = session
        self._test_id = test_id

    def check(
        self, suite: str, *, system: SystemSpec | None = None, **settings: Any
    ) -> SuiteResult:
        """Run ``system`` on ``suite`` and assert its gate; return the suite's result.

        ``system`` is a Python callable (input → text, sync or async), a ``module:function``
        path, a mapping of system settings, or None for the configured system. ``settings``
        override ``concurrency``, ``timeout_s``, ``samples`` or ``env``. Under
        ``--goldgate-bless`` a regression passes and the suite is blessed at session end.
        """
        __tracebackhide__ = True
        return self._session.check(suite, system=system, overrides=settings, test_id=self._test_id)


@pytest.fixture
def goldgate(request: pytest.FixtureRequest) -> GoldgateChecker:
    """Evaluate a Python callable against a goldgate suite: ``goldgate.check("qa", system=f)``."""
    return GoldgateChecker(_session(request.config), request.node.nodeid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After a test marked ``@pytest.mark.goldgate(suite=...)`` passes, check its suite."""
    __tracebackhide__ = True
    result = yield
    if item.get_closest_marker(MARKER) is not None:
        suite, system, settings = _marker_check(item)
        _session(item.config).check(suite, system=system, overrides=settings, test_id=item.nodeid)
    return result


def _marker_check(item: pytest.Item) -> tuple[str, SystemSpec | None, dict[str, Any]]:
    """The suite, system and settings of an item's goldgate marker."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        raise ValueError(f"{item.nodeid} has no {MARKER} marker")
    settings = dict(marker.kwargs)
    suite = settings.pop("suite", marker.args[0] if marker.args else None)
    if not isinstance(suite, str) or len(marker.args) > 1:
        raise pytest.UsageError(
            f"{item.nodeid}: use @pytest.mark.{MARKER}(suite='name', system=..., **settings)"
        )
    return suite, settings.pop("system", None), settings


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Show a fixture or marker gate failure as goldgate's text, not as a traceback."""
    report = yield
    if call.excinfo is not None and isinstance(call.excinfo.value, Crashed):
        # A crash is no failed gate: the session ends with exit code 3 (see sessionfinish).
        report.user_properties.append((CRASH_PROPERTY, call.excinfo.value.text))
        report.longrepr = console.clean(call.excinfo.value.text)
        return report
    checks = FIXTURE in getattr(item, "fixturenames", ()) or item.get_closest_marker(MARKER)
    if call.excinfo is not None and checks and not isinstance(item, GoldgateItem):
        error = call.excinfo.value
        if isinstance(error, GateFailed | GoldgateError):
            where = _test_location(item, call.excinfo)
            text = error.text if isinstance(error, GateFailed) else f"goldgate: {error}"
            report.longrepr = console.clean(f"{where}{text}")
    return report


def _test_location(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    for entry in reversed(excinfo.traceback):
        if Path(entry.path) == item.path:
            return f"{item.path.name}:{entry.lineno + 1}: "
    return ""


# -- the end of the session -----------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)  # before junitxml and the last-failed cache write theirs
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Record the history and bless once, on the controller (or the lone process)."""
    state = _session(session.config)
    state.finish(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
    if state.bless_failed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        # Reported as a failed test (as xdist reports a crashed worker), so that the summary
        # line, the short summary and junit say what failed and why, not "6 passed".
        report = pytest.TestReport(
            nodeid=BLESS_NODE,
            location=(BLESS_NODE, None, BLESS_NODE),
            keywords={BLESS_NODE: 1},
            outcome="failed",
            longrepr=console.clean(state.bless_error or "could not bless"),
            when="call",
        )
        session.config.hook.pytest_runtest_logreport(report=report)
    if state.crashed:
        # goldgate's internal error is pytest's (exit 3), never a failed test (1).
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, exitstatus: int, config: pytest.Config
) -> None:
    """The metric table of the run, once per session, and what was blessed."""
    state = _session(config)
    if state.is_worker:
        return
    outcome = state.outcome
    lines: list[str] = []
    if outcome is not None and outcome.result is not None:
        lines += render_summary(outcome.result)
        report_dir = state.config().report.dir
        lines.append(f"reports: {report_dir}")
    elif outcome is not None and outcome.error is not None:
        lines.append(f"error: {outcome.error}")
    for test_id, suite in state.checks:
        lines.append(f"{test_id}: suite {suite.name!r} {suite.verdict.value}")
    lines += state.messages
    if lines:
        terminalreporter.write_sep("=", "goldgate")
        for line in lines:
            terminalreporter.write_line(console.clean(line))
