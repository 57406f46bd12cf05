"""The drift rule: the boiling frog fails max_drift at the crossing commit, not before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli.main import main
from tests.history.project import GitProject


def _run(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, object]]:
    capsys.readouterr()
    code = main(["run", "-q", "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _checks(result: dict[str, object], rule: str) -> list[dict[str, object]]:
    suites = result["suites"]
    assert isinstance(suites, list)
    return [c for s in suites for c in s["checks"] if c["rule"] == rule]


@pytest.mark.parametrize("metric", ["exact_match", "gg_errors:error_rate"])
def test_the_boiling_frog_fails_max_drift_at_the_crossing_commit(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    metric: str,
) -> None:
    """Ten commits each lose one point (within max_drop 1.5), each blessed; drift 4.5."""
    monkeypatch.chdir(tmp_path)
    project = GitProject(
        tmp_path,
        n=200,
        metric=metric,
        gate="{max_drop: 1.5, max_drift: 4.5}",
        significance="{seed: 0}",
    )
    assert main(["bless"]) == 0
    project.commit("bless the start")
    verdicts = []
    for step in range(1, 11):
        project.set_right(200 - 2 * step)  # two of 200 examples go wrong: one point
        project.commit(f"step {step}")
        code, result = _run(capsys)
        (drop,) = _checks(result, "max_drop")
        assert drop["status"] == "pass", drop["message"]  # each step is within max_drop
        (drift,) = _checks(result, "max_drift")
        assert drift["delta"] == pytest.approx(step if metric != "exact_match" else -step)
        verdicts.append((step, code, result["verdict"], drift["status"]))
        assert main(["bless"]) == 0
        project.commit(f"bless step {step}")
    # drift 5 > 4.5 at step 5 (and significant: ten of 200 examples, all the same way)
    assert verdicts == [
        (step, 0, "pass", "pass") if step < 5 else (step, 1, "regressed", "fail")
        for step in range(1, 11)
    ]


def test_anchor_ref_and_best_of(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    project = GitProject(tmp_path, n=100, gate="{max_drift: 3.0}")
    project.set_right(90)
    assert main(["bless"]) == 0
    project.commit("bless 90")
    project._git("tag", "v1.2")
    for right in (95, 93, 92):
        project.set_right(right)
        assert main(["bless"]) == 0
        project.commit(f"bless {right}")
    project.set_right(91)
    # best of the last 10 blesses is 95: 91 is 4 below
    code, result = _run(capsys)
    (drift,) = _checks(result, "max_drift")
    assert (code, drift["status"], drift["baseline"]) == (1, "fail", 95.0)
    assert "best of the last 4 blesses" in str(drift["message"])
    # against the release tag (90) it has not drifted at all
    code, result = _run(capsys, "--anchor-ref", "v1.2")
    (drift,) = _checks(result, "max_drift")
    assert (code, drift["status"], drift["baseline"]) == (0, "pass", 90.0)
    assert "anchor v1.2" in str(drift["message"])
    # best of the last 2 (93, 92) is 93: 2 below passes
    project.write_config(gate="{max_drift: 3.0}", extra="anchor: {best_of: 2}\n")
    code, result = _run(capsys)
    (drift,) = _checks(result, "max_drift")
    assert (code, drift["status"], drift["baseline"]) == (0, "pass", 93.0)
    # max_drift_rel: 2 % of 93 is 1.86 < 2
    project.write_config(gate="{max_drift_rel: 0.02}", extra="anchor: {best_of: 2}\n")
    code, result = _run(capsys)
    (drift,) = _checks(result, "max_drift_rel")
    assert (code, drift["status"]) == (1, "fail")


def test_no_anchor_skips_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    GitProject(tmp_path, git=False, gate="{max_drift: 1.0}")
    code, result = _run(capsys)
    (drift,) = _checks(result, "max_drift")
    assert code == 0 and drift["status"] == "skipped"
    assert "no blessed history to anchor on" in str(drift["message"])
    code, result = _run(capsys, "--anchor-ref", "nope")
    (drift,) = _checks(result, "max_drift")
    assert drift["status"] == "skipped" and "cannot read the anchor" in str(drift["message"])
