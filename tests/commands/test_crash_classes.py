"""Each class of crash found by hostile testing: a clear error naming what went wrong, exit 2
(bad input or a user's code) — never a traceback, never exit 1 — through ``goldgate``'s main.
"""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path

import pytest

from goldgate.cli.main import main

METRICS = """
import math

def huge(candidate, references):
    return 1e308

def signed_huge(candidate, references):
    # finite per example; the delta between two runs is not
    return 1e308 if candidate == references[0] else -1e308

def nan(candidate, references):
    return float("nan")

def inf(candidate, references):
    return math.inf

def raises(candidate, references):
    if candidate == "boom":
        raise RuntimeError("the metric broke")
    return 100.0

class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no message for you")

def unprintable(candidate, references):
    raise Unprintable()


from goldgate.metrics.base import Metric, MetricOptions

class _Options(MetricOptions):
    pass

class NanScore(Metric):
    # a plugin class whose statistics are fine and whose score is not
    name = "nan_score"
    Options = _Options
    stat_names = ("zero",)

    def example_stats(self, candidate, references):
        return (0.0,)

    def score_stats(self, stats):
        return float("nan")

    def signature_fields(self):
        return []

class RaisingScore(NanScore):
    def score_stats(self, stats):
        raise KeyError("score_stats broke")

class RaisingComponents(NanScore):
    def score_stats(self, stats):
        return 0.0

    def components(self, stats):
        raise ZeroDivisionError("components broke")

class WrongShapeScores(NanScore):
    def score_stats(self, stats):
        return 50.0

    def example_scores(self, stats):
        return [1.0, 2.0, 3.0]
"""


def make_project(root: Path, metric: str, outputs: list[str]) -> str:
    """A suite of len(outputs) examples scored by ``<module>:<metric>``; returns the module."""
    module = f"gg_metrics_{uuid.uuid4().hex[:8]}"
    (root / f"{module}.py").write_text(METRICS)
    goldens = [
        {"id": f"q{i}", "input": f"x{i}", "references": [f"a{i}"]} for i in range(len(outputs))
    ]
    (root / "g.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    write_outputs(root, outputs)
    (root / "goldgate.yaml").write_text(
        textwrap.dedent(
            f"""
            version: 1
            system: {{predictions: p.jsonl}}
            suites:
              s:
                goldens: g.jsonl
                metrics: {{"{module}:{metric}": {{}}}}
            report: {{dir: out, formats: [md, html, json, junit]}}
            """
        )
    )
    return module


def write_outputs(root: Path, outputs: list[str]) -> None:
    rows = [{"id": f"q{i}", "output": text} for i, text in enumerate(outputs)]
    (root / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("NanScore", "its corpus score is nan, not a finite number"),
        ("RaisingScore", "raised KeyError: 'score_stats broke' at "),
        ("RaisingComponents", "raised ZeroDivisionError: components broke at "),
        ("WrongShapeScores", "WrongShapeScores.example_scores gave an array of shape (3,) for 2"),
    ],
)
@pytest.mark.parametrize("command", ["run", "bless"])
def test_a_metric_class_whose_score_is_not_a_number_is_named(
    here: Path, capsys: pytest.CaptureFixture[str], metric: str, expected: str, command: str
) -> None:
    module = make_project(here, metric, ["a0", "a1"])
    capsys.readouterr()
    assert main([command, "-q"]) == 2
    err = capsys.readouterr().err
    assert f"goldgate: error: suite 's', metric '{module}:{metric}': {expected}" in err
    assert not (here / "goldgate.baseline.json").exists()


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        ("nan", "gave a statistic that is not a finite number ([nan, 1.0]) (suite 's', id 'q0')"),
        ("inf", "gave a statistic that is not a finite number ([inf, 1.0]) (suite 's', id 'q0')"),
        ("huge", "gave statistics too large to add up (the largest: 1e+308) (suite 's', id 'q0')"),
        ("raises", "raised RuntimeError: the metric broke (suite 's', id 'q1')"),
        (
            "unprintable",
            "raised Unprintable (its message could not be read: ValueError) (suite 's', id 'q0')",
        ),
    ],
)
@pytest.mark.parametrize("command", ["run", "bless"])
def test_a_custom_metric_s_mistake_names_the_metric_and_the_id(
    here: Path, capsys: pytest.CaptureFixture[str], metric: str, expected: str, command: str
) -> None:
    module = make_project(here, metric, ["a0", "boom", "a2"])
    capsys.readouterr()
    assert main([command, "-q"]) == 2
    err = capsys.readouterr().err
    assert f"goldgate: error: metric '{module}:{metric}': {expected}" in err
    assert "Traceback" not in err
    assert not (here / ".goldgate").exists() or not list((here / ".goldgate").glob("crash-*"))
    if command == "bless":
        assert not (here / "goldgate.baseline.json").exists()
    else:
        assert (here / "out" / "report.html").exists()


def test_a_delta_of_1e308_still_gives_every_report(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each score is finite; the change between two runs is not: the HTML charts used to
    raise OverflowError and no report was written."""
    make_project(here, "signed_huge", ["a0"])
    assert main(["bless", "-q"]) == 0
    write_outputs(here, ["wrong"])  # from 1e308 to -1e308
    capsys.readouterr()
    code = main(["run", "-q"])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    for name in ("report.md", "report.html", "result.json", "junit.xml"):
        assert (here / "out" / name).stat().st_size > 0
    assert "Traceback" not in captured.out + captured.err


@pytest.mark.parametrize(
    "spec",
    [
        "os:system",  # would run every model output as a shell command
        "builtins:print",
        "subprocess:run",
        "collections:Counter",
    ],
)
def test_a_callable_that_is_no_metric_is_refused(
    here: Path, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    (here / "refs.txt").write_text("touch pwned\n")
    (here / "hyps.txt").write_text("touch pwned\n")
    code = main(["score", "--refs", "refs.txt", "--hyps", "hyps.txt", "--metric", spec])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"--metric {spec}: '{spec}'" in err
    assert "not a metric: a metric function takes (candidate, references)" in err
    assert not (here / "pwned").exists()


SYSTEMS = """
import asyncio, os, sys

class Unprintable(Exception):
    def __str__(self):
        raise ValueError("no message for you")

def exits(value):
    if value == "x1":
        os._exit(7)
    return "a" + value[1:]

async def exits_async(value):
    if value == "x1":
        os._exit(7)
    return "a" + value[1:]

async def sys_exits_async(value):
    if value == "x1":
        sys.exit(7)
    return "a" + value[1:]

def unprintable(value):
    raise Unprintable()
"""


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("exits", "called os._exit(7) (id 'q1')"),
        ("exits_async", "called os._exit(7) (id 'q1')"),
        ("sys_exits_async", "called sys.exit(7) (id 'q1')"),
        (
            "unprintable",
            "raised Unprintable (its message could not be read: ValueError) (id 'q0')",
        ),
    ],
)
def test_a_callable_that_ends_the_process_or_cannot_be_described_is_a_clear_error(
    tmp_path: Path, function: str, expected: str
) -> None:
    """A subprocess: on the old code ``os._exit`` would end the test process itself."""
    import subprocess
    import sys

    make_project(tmp_path, "huge", ["a0", "a1", "a2"])
    (tmp_path / "gg_systems.py").write_text(SYSTEMS)
    config = (tmp_path / "goldgate.yaml").read_text()
    (tmp_path / "goldgate.yaml").write_text(
        config.replace(
            "system: {predictions: p.jsonl}",
            f'system: {{callable: "gg_systems:{function}", concurrency: 1}}',
        ).replace(":huge", ":raises")
    )
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "goldgate"), "run", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"system.callable 'gg_systems:{function}': {expected}" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_goldgate_score_json_refuses_a_plugin_s_nan_score_by_name(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = make_project(here, "NanScore", ["a0"])
    monkeypatch.syspath_prepend(str(here))  # an installed plugin, as far as `score` knows
    (here / "refs.txt").write_text("a\n")
    (here / "hyps.txt").write_text("b\n")
    spec = f"{module}:NanScore"
    code = main(["score", "--refs", "refs.txt", "--hyps", "hyps.txt", "--metric", spec, "--json"])
    assert code == 2
    assert f"--metric {spec}: a score is not a finite number" in capsys.readouterr().err
