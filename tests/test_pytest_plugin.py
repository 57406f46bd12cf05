"""The pytest plugin, driven through pytester (the plugin loads through its entry point).

Each test builds a small project: a golden suite ``qa`` of 20 examples, a system module whose
functions append every input they are called with to the file named by ``GG_CALLS`` (so a
test can count system calls), and a goldgate.yaml.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

# Imported here, not in the tests: pytester drops modules first imported during a test, and
# numpy cannot be imported twice in one process.
from goldgate.model.config_loading import load_config
from goldgate.runner import bless

pytest_plugins = ["pytester"]

#: hypothesis's plugin prints nothing here but costs seconds at session end
QUIET = ("-p", "no:hypothesispytest")
N_QA = 20
N_ECHO = 6


class PanicException(BaseException):
    """What pyo3 raises for a Rust panic (a tokenizer's): a BaseException, not an Exception."""


SYSTEMS = '''
import os

def _log(x):
    path = os.environ.get("GG_CALLS")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(x + "\\n")

def good(x):
    _log(x)
    return "answer " + str(int(x[1:]))

def bad(x):
    """Wrong on every even-numbered question: exact match falls by half."""
    _log(x)
    n = int(x[1:])
    return "answer " + str(n) if n % 2 else "something else"
'''

CONFIG = """
version: 1
system: {{callable: "sysmod:{system}"}}
suites:
  qa:
    goldens: goldens/qa.jsonl
    metrics: {{exact_match: {{normalizer: squad}}, token_f1: {{normalizer: squad}}}}
    gate:
      exact_match: {{max_drop: 2.0}}
      token_f1: {{min: 10.0}}
  echo:
    goldens: goldens/echo.jsonl
    metrics: {{exact_match: {{}}}}
significance: off
report: {{dir: goldgate-report, formats: [json]}}
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project whose configured system is ``sysmod:good``; no baseline yet."""
    goldens = pytester.mkdir("goldens")
    qa = [
        {"id": f"qa-{i:02d}", "input": f"q{i:02d}", "references": [f"answer {i}"]}
        for i in range(1, N_QA + 1)
    ]
    echo = [
        {"id": f"echo-{i}", "input": f"e{i}", "references": [f"answer {i}"]}
        for i in range(1, N_ECHO + 1)
    ]
    (goldens / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    (goldens / "echo.jsonl").write_text("".join(json.dumps(r) + "\n" for r in echo))
    pytester.makepyfile(sysmod=SYSTEMS)
    use_system(pytester, "good")
    monkeypatch.setenv("GG_CALLS", str(pytester.path / "calls.txt"))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    """Run pytest in process: the plugin keeps its state in ``config.stash``, so nothing
    leaks between runs; the system module (``sysmod``) is the same file in every run and
    pytester restores ``sys.modules`` and ``sys.path`` after each test. xdist runs use a
    subprocess.
    """
    return pytester.runpytest_inprocess(*QUIET, *args)


def use_system(pytester: pytest.Pytester, name: str) -> None:
    """Point the configuration at ``sysmod:<name>``."""
    (pytester.path / "goldgate.yaml").write_text(CONFIG.format(system=name))


def calls(pytester: pytest.Pytester) -> list[str]:
    """The inputs the system was called with since the last call, then forget them."""
    path = pytester.path / "calls.txt"
    if not path.exists():
        return []
    lines = path.read_text().splitlines()
    path.unlink()
    return lines


def bless_library(pytester: pytest.Pytester) -> None:
    """Bless the current system through the library (not the plugin under test)."""
    bless(load_config(pytester.path / "goldgate.yaml"))
    calls(pytester)


def baseline_score(pytester: pytest.Pytester, suite: str, metric: str) -> float:
    data = json.loads((pytester.path / "goldgate.baseline.json").read_text())
    return float(data["suites"][suite]["metrics"][metric]["score"])


def summary_sections(output: str) -> int:
    return len(re.findall(r"^=+ goldgate =+$", output, flags=re.MULTILINE))


def test_a_passing_suite_gives_one_item_per_gated_metric(project: pytest.Pytester) -> None:
    bless_library(project)
    result = run(project, "--goldgate", "-v", "--goldgate-report-dir", "out")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "goldgate::qa::exact_match PASSED*",
            "goldgate::qa::token_f1 PASSED*",
            "goldgate::echo::scored PASSED*",
        ]
    )
    output = result.stdout.str()
    assert summary_sections(output) == 1
    assert re.search(r"^\s+exact_match\s+100\.00\s+100\.00\s+\+0\.00", output, re.MULTILINE)
    assert len(calls(project)) == N_QA + N_ECHO
    saved = json.loads((project.path / "out" / "result.json").read_text())
    assert saved["verdict"] == "pass"
    assert not (project.path / "goldgate-report").exists()


def test_without_the_option_nothing_is_collected_or_run(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_plain="""
        from goldgate.errors import ConfigError

        def test_one():
            pass

        def test_library_error_keeps_its_traceback():
            raise ConfigError("raised by the test itself")
        """
    )
    result = run(project, "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*raise ConfigError(*", "E * raised by the test itself"])
    assert "goldgate::" not in result.stdout.str()
    assert calls(project) == []


def test_a_regression_fails_with_the_table_and_worst_examples(project: pytest.Pytester) -> None:
    bless_library(project)
    use_system(project, "bad")
    result = run(project, "--goldgate")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ goldgate::qa::exact_match _*",
            "goldgate suite 'qa': regressed (20 examples, goldens/qa.jsonl)",
            "failed checks:",
            "  max_drop 2: qa: exact_match*100.00*50.00*",
            "metrics:",
            "*exact_match*100.00*50.00*-50.00*",
            "worst regressed examples (exact_match):",
            "  qa-02 (goldens/qa.jsonl:2): exact_match 100.00 → 0.00",
            "    input:     q02",
            "    reference: answer 2",
            "    output:    something else",
            "    was:       answer 2",
            "*FAILED goldgate::qa::exact_match*",
        ]
    )
    output = result.stdout.str()
    # goldgate's own text stands in for a traceback of plugin internals
    assert "Traceback" not in output and "def runtest" not in output
    assert "qa-01 (" not in output  # right before and after: not a regression
    assert summary_sections(output) == 1


def test_bless_writes_the_baseline_calling_the_system_once(project: pytest.Pytester) -> None:
    result = run(project, "--goldgate-bless")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["blessed qa, echo into *goldgate.baseline.json"])
    assert baseline_score(project, "qa", "exact_match") == 100.0
    assert len(calls(project)) == N_QA + N_ECHO

    use_system(project, "bad")
    accepted = run(project, "--goldgate-bless", "--goldgate-allow-regression")
    assert accepted.ret == pytest.ExitCode.OK  # a regression accepted on purpose
    accepted.stdout.fnmatch_lines(["blessed qa, echo into *baseline.json (forced past qa)"])
    assert baseline_score(project, "qa", "exact_match") == 50.0
    assert len(calls(project)) == N_QA + N_ECHO

    after = run(project, "--goldgate")
    after.assert_outcomes(passed=3)


def test_bless_refuses_a_regression_as_goldgate_bless_does(project: pytest.Pytester) -> None:
    bless_library(project)
    use_system(project, "bad")
    result = run(project, "--goldgate-bless")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # the regressed item fails, and the refused bless is a failure of its own in the summary
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ goldgate-bless _*",
            "could not bless: 1 gate check failed in qa (qa: exact_match dropped beyond"
            " max_drop 2.00*); the baseline *goldgate.baseline.json is unchanged. Fix the"
            " regression, or accept it with --goldgate-bless --goldgate-allow-regression*",
            "FAILED goldgate::qa::exact_match - *",
            "FAILED goldgate-bless - could not bless: *",
        ]
    )
    assert "blessed qa" not in result.stdout.str()
    assert baseline_score(project, "qa", "exact_match") == 100.0
    assert (
        "forced"
        not in json.loads((project.path / "goldgate.baseline.json").read_text())["suites"]["qa"]
    )

    misuse = run(project, "--goldgate", "--goldgate-allow-regression")
    assert misuse.ret == pytest.ExitCode.USAGE_ERROR
    misuse.stderr.fnmatch_lines(["*--goldgate-allow-regression applies to --goldgate-bless*"])


def test_a_forced_bless_is_recorded_when_two_tests_bless_one_suite(
    project: pytest.Pytester,
) -> None:
    bless_library(project)
    use_system(project, "bad")
    # the configured system again: the same outputs as goldgate::qa, so no conflict
    project.makepyfile(test_fixture="def test_again(goldgate):\n    goldgate.check('qa')\n")
    result = run(project, "--goldgate-bless", "--goldgate-allow-regression")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "blessed qa, echo into * (forced past qa)",
            "blessed qa (from test_fixture.py::test_again) into * (forced past qa)",
        ]
    )
    data = json.loads((project.path / "goldgate.baseline.json").read_text())
    assert data["suites"]["qa"]["forced"] == [
        "qa: exact_match dropped beyond max_drop 2.00 (100.00 → 50.00, -50.00)"
    ]
    assert baseline_score(project, "qa", "exact_match") == 50.0


def test_bless_of_a_selection_keeps_the_other_suites(project: pytest.Pytester) -> None:
    bless_library(project)
    use_system(project, "bad")
    result = run(project, "--goldgate-bless", "--goldgate-allow-regression", "-k", "qa")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["blessed qa into * (forced past qa)"])
    assert all(line.startswith("q") for line in calls(project))
    data = json.loads((project.path / "goldgate.baseline.json").read_text())
    assert set(data["suites"]) == {"qa", "echo"}
    assert baseline_score(project, "qa", "exact_match") == 50.0


def test_the_fixture_checks_a_python_callable(project: pytest.Pytester) -> None:
    bless_library(project)
    project.makepyfile(
        test_fixture="""
        def answer(x):
            return "answer " + str(int(x[1:]))

        async def async_answer(x):
            return answer(x)

        def test_good(goldgate):
            result = goldgate.check("qa", system=answer, concurrency=2)
            assert result.verdict == "pass"
            assert result.n_examples == 20

        def test_async(goldgate):
            assert goldgate.check("qa", system=async_answer).verdict == "pass"

        def test_configured_system(goldgate):
            assert goldgate.check("echo").verdict == "pass"

        def test_bad(goldgate):
            goldgate.check("qa", system=lambda x: "no idea")

        def test_unknown_setting(goldgate):
            goldgate.check("qa", system=answer, concurency=2)

        def crashing(x):
            raise ValueError("model server down")

        def test_crash(goldgate):
            goldgate.check("qa", system=crashing)
        """
    )
    result = run(project, "-v")
    result.assert_outcomes(passed=3, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*_ test_bad _*",
            "test_fixture.py:19: goldgate suite 'qa': regressed*",
            "failed checks:",
            "  max_drop 2: *",
            "*exact_match*100.00*0.00*-100.00*",
            "worst regressed examples (exact_match, token_f1):",
            "*_ test_unknown_setting _*",
            "*TypeError: goldgate.check() got an unexpected keyword 'concurency'"
            " (did you mean 'concurrency'?)*",
            "*_ test_crash _*",
            "test_fixture.py:28: goldgate: system.callable 'test_fixture:crashing': raised"
            " ValueError: model server down (id 'qa-*') at *test_fixture.py:25",
        ]
    )
    # only the configured system logs its calls (threads: in any order)
    assert sorted(calls(project)) == ["e1", "e2", "e3", "e4", "e5", "e6"]


def test_the_marker_checks_after_the_test_body(project: pytest.Pytester) -> None:
    bless_library(project)
    project.makepyfile(
        test_marker="""
        import pytest

        def answer(x):
            return "answer " + str(int(x[1:]))

        @pytest.mark.goldgate(suite="qa", system=answer)
        def test_good():
            pass

        @pytest.mark.goldgate("qa", system="sysmod:bad", concurrency=1)
        def test_bad():
            pass

        @pytest.mark.goldgate(suite="qa", system="sysmod:bad")
        def test_body_fails_first():
            assert False, "the body failed"
        """
    )
    result = run(
        project,
    )
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_bad _*",
            "goldgate suite 'qa': regressed*",
            "*_ test_body_fails_first _*",
            "*the body failed*",
        ]
    )
    assert len(calls(project)) == N_QA  # test_bad only: a failed body skips the check

    project.makepyfile(
        test_marker="""
        import pytest

        @pytest.mark.goldgate(suite="qaa")
        def test_typo():
            pass
        """
    )
    typo = run(project)
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    typo.stderr.fnmatch_lines(
        [
            "ERROR: test_marker.py::test_typo: @pytest.mark.goldgate: no suite 'qaa' in *"
            "goldgate.yaml (did you mean 'qa'?)"
        ]
    )


def test_fixture_checks_are_blessed_at_session_end(project: pytest.Pytester) -> None:
    bless_library(project)
    project.makepyfile(
        test_fixture="""
        def test_worse(goldgate):
            goldgate.check("qa", system=lambda x: "no idea")
        """
    )
    refused = run(project, "--goldgate-bless", "-k", "worse")
    refused.assert_outcomes(failed=2)
    refused.stdout.fnmatch_lines(
        [
            "*_ test_worse _*",
            "test_fixture.py:2: goldgate suite 'qa': regressed*",
            "FAILED goldgate-bless - could not bless: 2 gate checks failed in qa*",
        ]
    )
    assert baseline_score(project, "qa", "exact_match") == 100.0

    result = run(project, "--goldgate-bless", "--goldgate-allow-regression", "-k", "worse")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["blessed qa (from test_fixture.py::test_worse) into * (forced past qa)"]
    )
    assert baseline_score(project, "qa", "exact_match") == 0.0


def test_a_configuration_error_is_a_usage_error(project: pytest.Pytester) -> None:
    config = project.path / "goldgate.yaml"
    config.write_text(config.read_text().replace("token_f1: {min", "token_f: {min"))
    result = run(project, "--goldgate")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: goldgate: *goldgate.yaml*suites.qa.gate.token_f*"])
    assert "did you mean 'token_f1'" in result.stderr.str()

    project.makepyfile(test_fixture="def test_x(goldgate):\n    goldgate.check('qa')\n")
    with_fixture = run(
        project,
    )
    assert with_fixture.ret == pytest.ExitCode.USAGE_ERROR
    assert calls(project) == []


def test_a_missing_configuration_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--goldgate", "--goldgate-config", "nope.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: goldgate: *nope.yaml: no such configuration file"])


def test_a_crashing_system_fails_its_suite_items(project: pytest.Pytester) -> None:
    project.makepyfile(
        crash="def boom(x):\n    raise RuntimeError('model server down')\n",
    )
    config = project.path / "goldgate.yaml"
    config.write_text(
        config.read_text().replace(
            "goldens: goldens/echo.jsonl",
            'goldens: goldens/echo.jsonl\n    system: {callable: "crash:boom"}',
        )
    )
    result = run(project, "--goldgate")
    # no baseline yet: qa's max_drop item is skipped, its min item passes
    result.assert_outcomes(passed=1, skipped=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ goldgate::echo::scored _*",
            "goldgate: suite 'echo': system.callable 'crash:boom': raised RuntimeError:"
            " model server down*",
        ]
    )


def test_ini_options_enable_the_plugin(project: pytest.Pytester) -> None:
    conf = project.mkdir("conf")
    (project.path / "goldgate.yaml").rename(conf / "gg.yaml")
    (conf / "sysmod.py").write_text(SYSTEMS)
    (project.path / "goldens").rename(conf / "goldens")
    project.makeini("[pytest]\ngoldgate = true\ngoldgate_config = conf/gg.yaml\n")
    result = run(project, "-v")
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(
        ["goldgate::qa::exact_match SKIPPED (qa: exact_match: no baseline to c*"]
    )
    assert (conf / "goldgate-report" / "result.json").exists()


def test_last_failed_and_exitfirst(project: pytest.Pytester) -> None:
    bless_library(project)
    use_system(project, "bad")
    first = run(project, "--goldgate", "-x")
    first.assert_outcomes(failed=1)  # exact_match fails first; -x stops before token_f1
    rerun = run(project, "--goldgate", "--lf", "-v")
    rerun.assert_outcomes(failed=1)
    rerun.stdout.fnmatch_lines(["goldgate::qa::exact_match FAILED*"])
    assert "token_f1" not in rerun.stdout.str().split("= FAILURES =")[0]
    assert all(line.startswith("q") for line in calls(project)[-N_QA:])


def test_xdist_runs_the_system_and_gate_once(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("xdist")
    bless_library(project)
    use_system(project, "bad")
    project.makepyfile(test_plain="def test_a():\n    pass\n\ndef test_b():\n    pass\n")
    # Loaded by the controller and by every worker: counts report writes wherever they happen.
    project.makeconftest(
        """
        import os
        import goldgate.pipeline.record

        _write_result = goldgate.pipeline.record.write_result

        def counting(*args, **kwargs):
            with open(os.environ["GG_WRITES"], "a") as handle:
                handle.write("write\\n")
            return _write_result(*args, **kwargs)

        goldgate.pipeline.record.write_result = counting
        """
    )
    writes = project.path / "writes.txt"
    monkeypatch.setenv("GG_WRITES", str(writes))
    result = project.runpytest_subprocess(*QUIET, "-n", "2", "--goldgate", "-v")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        ["*FAILED goldgate::qa::exact_match*", "worst regressed examples (exact_match):"]
    )
    output = result.stdout.str()
    assert len(re.findall(r"\[gw[01]\].*goldgate::", output)) == 3
    assert sorted(calls(project)) == sorted(
        [f"q{i:02d}" for i in range(1, N_QA + 1)] + [f"e{i}" for i in range(1, N_ECHO + 1)]
    )
    assert summary_sections(output) == 1
    assert writes.read_text().splitlines() == ["write"]


def test_xdist_bless_once_with_fixture_checks_from_workers(project: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    project.makepyfile(
        test_fixture="""
        def test_echo_worse(goldgate):
            goldgate.check("echo", system=lambda x: "no idea")

        def test_plain():
            pass
        """
    )
    result = project.runpytest_subprocess(
        *QUIET, "-n", "2", "--goldgate-bless", "-k", "not echo or worse"
    )
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "blessed qa into *goldgate.baseline.json",
            "blessed echo (from test_fixture.py::test_echo_worse) into *",
        ]
    )
    assert len(calls(project)) == N_QA  # the configured system, once
    assert baseline_score(project, "qa", "exact_match") == 100.0
    assert baseline_score(project, "echo", "exact_match") == 0.0
    # one history row: the controller's qa and the echo a worker checked
    assert history_runs(project) == [("pytest", ["echo", "qa"])]


def test_two_tests_blessing_one_suite_from_different_systems_is_an_error(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_fixture="""
        def test_echo_worse(goldgate):
            goldgate.check("echo", system=lambda x: "no idea")
        """
    )
    result = project.runpytest_subprocess(*QUIET, "--goldgate-bless", "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    junit = (project.path / "junit.xml").read_text()
    assert re.search(r'name="goldgate-bless"[^>]*><failure message="could not bless: ', junit)
    # the summary says what failed, not "4 passed" with exit code 1
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*could not bless: suite 'echo' is blessed by goldgate::echo and by"
            " test_fixture.py::test_echo_worse from different systems*nothing was blessed*",
            "FAILED goldgate-bless - could not bless: suite 'echo' is blessed by*",
            "*= 1 failed, 4 passed in *",
        ]
    )
    assert not (project.path / "goldgate.baseline.json").exists()


def test_importing_the_plugin_stays_light() -> None:
    # Every pytest run where goldgate is installed imports the plugin; pydantic models and
    # numpy are imported only when goldgate is used.
    code = (
        "import sys, goldgate.pytest.plugin; "
        "print(sorted(m for m in ('pydantic', 'numpy', 'goldgate.model.config')"
        " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("kind", [ZeroDivisionError, PanicException])
def test_a_crash_while_configuring_exits_3_in_one_line_not_internalerror(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: type[BaseException]
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise kind("injected by the test")

    monkeypatch.setattr("goldgate.model.config_loading.load_config", boom)
    result = run(project, "--goldgate")
    assert result.ret == 3
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    assert "Traceback" not in output
    assert f"goldgate: internal error: {kind.__name__}: injected by the test" in output
    saved = re.search(r"the traceback is in (\S+)", output)
    assert saved is not None
    assert "injected by the test" in Path(saved.group(1)).read_text(encoding="utf-8")


def test_any_goldgate_error_while_configuring_is_a_usage_error(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldgate.errors import InputError

    def bad(*args: object, **kwargs: object) -> None:
        raise InputError("goldens/qa.jsonl:3: a bad line")

    monkeypatch.setattr("goldgate.model.config_loading.load_config", bad)
    result = run(project, "--goldgate")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "goldgate: goldens/qa.jsonl:3: a bad line" in result.stderr.str()
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def history_runs(pytester: pytest.Pytester) -> list[tuple[str, list[str]]]:
    """Each recorded run's source and suites, oldest first."""
    path = load_config(pytester.path / "goldgate.yaml").history.path  # type: ignore[union-attr]
    assert path is not None
    with sqlite3.connect(path) as db:
        runs = db.execute("SELECT id, source FROM runs ORDER BY id").fetchall()
        return [
            (
                source,
                sorted(
                    s for (s,) in db.execute("SELECT suite FROM suites WHERE run_id = ?", (run,))
                ),
            )
            for run, source in runs
        ]


def test_one_session_records_one_history_row(project: pytest.Pytester) -> None:
    bless_library(project)
    project.makepyfile(
        test_fixture="""
        import pytest

        def answer(x):
            return "answer " + str(int(x[1:]))

        def test_one(goldgate):
            goldgate.check("qa", system=answer)

        def test_two(goldgate):
            goldgate.check("echo")

        @pytest.mark.goldgate(suite="qa", system=answer)
        def test_three():
            pass
        """
    )
    result = run(project, "--goldgate")
    result.assert_outcomes(passed=6)
    # the configured run and three checks: one row, each suite once
    assert history_runs(project) == [("pytest", ["echo", "qa"])]

    checks_only = run(project, "-k", "two")
    checks_only.assert_outcomes(passed=1, deselected=2)
    assert history_runs(project)[1:] == [("pytest", ["echo"])]

    # the configured system's fingerprint, not that of a scratch file: the same each session
    run(project, "--goldgate", "-k", "goldgate")
    run(project, "--goldgate", "-k", "goldgate")
    path = load_config(project.path / "goldgate.yaml").history.path  # type: ignore[union-attr]
    with sqlite3.connect(str(path)) as db:
        systems = [s for (s,) in db.execute("SELECT system FROM runs ORDER BY id")]
    assert systems[-1] == systems[-2]


def test_an_item_id_on_the_command_line_selects_it(project: pytest.Pytester) -> None:
    bless_library(project)
    project.makepyfile(test_plain="def test_plain():\n    pass\n")
    one = run(project, "goldgate::qa::token_f1", "-v")
    assert one.ret == pytest.ExitCode.OK
    one.assert_outcomes(passed=1)
    one.stdout.fnmatch_lines(["goldgate::qa::token_f1 PASSED*"])
    assert sorted(calls(project)) == [f"q{i:02d}" for i in range(1, N_QA + 1)]

    suite = run(project, "--goldgate", "test_plain.py", "goldgate::echo", "-v")
    suite.assert_outcomes(passed=2)
    suite.stdout.fnmatch_lines(["test_plain.py::test_plain PASSED*", "goldgate::echo::scored*"])
    assert "goldgate::qa" not in suite.stdout.str()

    typo = run(project, "goldgate::qaa")
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    typo.stderr.fnmatch_lines(
        ["ERROR: goldgate: no item goldgate::qaa (did you mean 'goldgate::qa'?)"]
    )


def test_a_marked_test_errors_when_the_plugin_is_disabled(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_marker="""
        import pytest

        @pytest.mark.goldgate(suite="qa", system="sysmod:bad")
        def test_marked():
            pass

        def test_plain():
            pass
        """
    )
    for strict in ((), ("--strict-markers",)):
        result = run(project, "-p", "no:goldgate", *strict)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines(
            [
                "*ERROR at setup of test_marked*",
                "test_marker.py::test_marked is marked @pytest.mark.goldgate, but goldgate's"
                " pytest plugin is disabled (-p no:goldgate), so its gate would not be checked*",
            ]
        )
        assert calls(project) == []
    deselected = run(project, "-p", "no:goldgate", "-m", "not goldgate")
    deselected.assert_outcomes(passed=1, deselected=1)


FIXTURE_CHECK = """
def test_fixture_check(goldgate):
    goldgate.check("echo")
"""


@pytest.mark.parametrize("kind", [ZeroDivisionError, PanicException])
def test_a_crash_while_scoring_exits_3_never_as_a_failed_gate(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: type[BaseException]
) -> None:
    """A crash failed the gate's items (exit 1, a regression); a PanicException's traceback
    filled the page."""

    def boom(*args: object, **kwargs: object) -> None:
        raise kind("injected by the test")

    bless_library(project)
    project.makepyfile(test_fixture=FIXTURE_CHECK)
    monkeypatch.setattr("goldgate.runner.score_suite", boom)
    result = run(project, "--goldgate")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert f"goldgate: internal error: {kind.__name__}: injected by the test" in output
    assert "Traceback" not in output and "INTERNALERROR" not in output
    saved = re.search(r"the traceback is in (\S+)", output)
    assert saved is not None
    assert "injected by the test" in Path(saved.group(1)).read_text(encoding="utf-8")


def test_a_crash_in_an_xdist_workers_fixture_check_exits_3(project: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    bless_library(project)
    project.makepyfile(test_fixture=FIXTURE_CHECK)
    # Loaded by the controller and by every worker (a subprocess: nothing leaks).
    project.makeconftest(
        """
        import goldgate.runner

        class PanicException(BaseException):
            pass

        def boom(*args, **kwargs):
            raise PanicException("injected by the test")

        goldgate.runner.score_suite = boom
        """
    )
    result = project.runpytest_subprocess(*QUIET, "-n", "2", "-k", "fixture_check")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    output = result.stdout.str()
    assert "goldgate: internal error: PanicException: injected by the test" in output
    assert "Traceback" not in output


def test_a_crash_while_blessing_at_session_end_exits_3(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise PanicException("injected by the test")

    monkeypatch.setattr("goldgate.runner.bless_reviewed", boom)
    result = run(project, "--goldgate-bless")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "could not bless: goldgate: internal error: PanicException: injected" in output
    assert "Traceback" not in output and "INTERNALERROR" not in output
