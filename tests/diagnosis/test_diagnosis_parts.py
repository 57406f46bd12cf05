"""The diagnosis's parts on their own: clusters, the headline, transitions, the direction of
a regression, what changed in git, and the blessed side's cache."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from goldgate.diagnosis.changes import config_difference, run_changes
from goldgate.diagnosis.clusters import MAX_CLUSTERS, MAX_IDS, Unexplained, find_clusters
from goldgate.diagnosis.headline import headline
from goldgate.diagnosis.sides import SideMasks
from goldgate.diagnosis.transitions import category_counts
from goldgate.model.config_loading import load_config
from goldgate.model.diagnosis import CategoryCounts, Cluster
from goldgate.model.example_table import ExampleResult, ExampleRows
from goldgate.model.result import MetricSummary, SuiteResult, Verdict
from goldgate.pipeline.diagnose import _regressed
from tests.diagnosis.test_diagnosis_run import _goldgate


def test_clusters_are_deterministic_bounded_and_escaped() -> None:
    items = [Unexplained(f"a{i}", f"Sure! Here is \x1b[31m{i}", "old") for i in range(50)]
    items += [Unexplained(f"b{i}", f"x{i} then as follows y{i}", "as before") for i in range(30)]
    items += [Unexplained(f"c{i}", f"unique{i}", None) for i in range(5)]
    clusters = find_clusters(items)
    assert clusters == find_clusters(list(items))
    assert clusters[0] == Cluster(
        pattern="Sure! Here is", kind="opening", count=50, ids=[f"a{i}" for i in range(MAX_IDS)]
    )
    assert all("\x1b" not in c.pattern for c in clusters)
    assert clusters[1].kind == "phrase" and clusters[1].pattern == "then as follows"
    assert clusters[1].count == 30
    assert len(clusters) <= MAX_CLUSTERS
    # an opening the blessed output had already is not new
    same = [Unexplained(f"d{i}", f"Dear sir {i}", f"Dear sir {i + 1}") for i in range(9)]
    assert all(c.pattern != "Dear sir" for c in find_clusters(same))


def test_headline_wording() -> None:
    counts = {
        "empty": CategoryCounts(baseline=0, current=31, new=31, regressed=31),
        "refusal": CategoryCounts(baseline=1, current=7, new=6, regressed=6),
        "other": CategoryCounts(baseline=0, current=0, new=0, regressed=0),
    }
    text = headline(
        counts,
        regressed=40,
        explained=37,
        clusters=[],
        baseline_side="diagnosed",
        n_examples=100,
        metric="bleu",
    )
    assert text == (
        "31 of 40 regressed examples are now empty (0 before); 6 now refuse (1 before);"
        " 3 not explained by any detector"
    )
    one = headline(
        {"empty": CategoryCounts(baseline=0, current=1, new=1, regressed=1)},
        regressed=1,
        explained=1,
        clusters=[],
        baseline_side="diagnosed",
        n_examples=3,
        metric="bleu",
    )
    assert one == "1 of 1 regressed example is now empty (0 before)"
    calm = headline(
        {"empty": CategoryCounts(baseline=2, current=5, new=3, regressed=0)},
        regressed=0,
        explained=0,
        clusters=[],
        baseline_side="diagnosed",
        n_examples=9,
        metric="ter",
    )
    assert calm == "no example regressed on ter, but 3 are now empty (2 before)"


def test_transitions_count_each_side() -> None:
    masks = SideMasks(
        current=np.array([1, 1, 3, 0, 2], dtype=np.uint64),
        baseline=np.array([0, 1, 0, 2, 0], dtype=np.uint64),
        has_baseline=np.array([True, True, True, True, False]),
    )
    regressed = np.array([True, False, True, False, False])
    counts = category_counts(["a", "b"], masks, regressed, baseline_diagnosed=True)
    assert counts["a"] == CategoryCounts(baseline=1, current=3, new=2, regressed=2)
    # the last example has no blessed output: current, but never new
    assert counts["b"] == CategoryCounts(baseline=1, current=2, new=1, regressed=1)


def _suite(higher: bool, now: list[float], then: list[float]) -> SuiteResult:
    rows = [
        ExampleResult(
            id=f"e{i}", references=["r"], output="o", scores={"m": a}, baseline_scores={"m": b}
        )
        for i, (a, b) in enumerate(zip(now, then, strict=True))
    ]
    return SuiteResult(
        name="s",
        verdict=Verdict.PASS,
        goldens="g",
        golden_hash="h",
        n_examples=len(rows),
        metrics=[MetricSummary(metric="m", signature="m", higher_is_better=higher, current=0)],
        checks=[],
        examples=ExampleRows(rows),
    )


def test_regressed_follows_the_metric_direction(tmp_path: Path) -> None:
    (tmp_path / "g.jsonl").write_text("")
    (tmp_path / "goldgate.yaml").write_text(
        "version: 1\nsystem: {predictions: p.jsonl}\n"
        "suites: {s: {goldens: g.jsonl, metrics: {exact_match: {}}}}\n"
    )
    config = load_config(tmp_path / "goldgate.yaml")
    now, then = [10.0, 50.0, 30.0], [20.0, 50.0, 10.0]
    _, worse = _regressed(config, _suite(True, now, then))
    assert worse is not None and worse.tolist() == [True, False, False]
    _, worse = _regressed(config, _suite(False, now, then))  # TER: a rise is worse
    assert worse is not None and worse.tolist() == [False, False, True]


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=root,
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_NOSYSTEM": "1",
            "PATH": "/usr/bin:/bin",
        },
    )


def test_changes_since_the_baseline_commit(tmp_path: Path) -> None:
    root = tmp_path
    _git(root, "init", "-q")
    (root / "goldgate.yaml").write_text("version: 1\nsignificance: {resamples: 100}\n")
    (root / "goldgate.baseline.json").write_text("{}")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "bless")
    (root / "goldgate.yaml").write_text("version: 1\nsignificance: {resamples: 200}\n")
    (root / "prompt.txt").write_text("be terse")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "shorter prompt <b>")
    changes = run_changes(
        root,
        root / "goldgate.baseline.json",
        root / "goldgate.yaml",
        ref=None,
        baseline_goldgate="0.0.1",
    )
    assert changes.baseline_commit is not None
    assert [c.subject for c in changes.commits] == ["shorter prompt <b>"]
    assert changes.files == ["goldgate.yaml", "prompt.txt"]
    assert changes.config == ["significance.resamples"]
    assert changes.versions["goldgate (baseline)"] == "0.0.1"
    outside = run_changes(
        tmp_path / "nowhere", tmp_path / "b.json", None, ref=None, baseline_goldgate=None
    )
    assert outside.commits == [] and outside.baseline_commit is None


def test_config_difference_of_toml() -> None:
    old = "[tool.goldgate]\nversion = 1\n[tool.goldgate.report]\ndir = 'a'\n"
    new = "[tool.goldgate]\nversion = 1\n[tool.goldgate.report]\ndir = 'b'\n"
    assert config_difference(old, new, toml=True) == ["report.dir"]


def test_the_blessed_side_of_a_large_suite_is_diagnosed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 5000
    (tmp_path / "g.jsonl").write_text(
        "".join(
            json.dumps({"id": f"e{i}", "input": f"q{i}", "references": [f"r{i}"]}) + "\n"
            for i in range(n)
        )
    )
    (tmp_path / "goldgate.yaml").write_text(
        "version: 1\nsystem: {predictions: p.jsonl}\nsignificance: off\nhistory: off\n"
        "report: {formats: [json]}\n"
        "suites: {s: {goldens: g.jsonl, metrics: {exact_match: {}}}}\n"
    )

    def predict(empty_every: int) -> None:
        (tmp_path / "p.jsonl").write_text(
            "".join(
                json.dumps({"id": f"e{i}", "output": "" if i % empty_every == 0 else f"r{i}"})
                + "\n"
                for i in range(n)
            )
        )

    predict(10)
    assert _goldgate(tmp_path, monkeypatch, "bless") == 0
    baseline = json.loads((tmp_path / "goldgate.baseline.json").read_text())
    stored = baseline["suites"]["s"]["packed"]["categories"]
    assert len(stored["detectors"]) == 10 and stored["golden_hash"].startswith("sha256:")
    predict(5)
    # the blessed side's categories come with the baseline (found at bless): nothing cached
    assert _goldgate(tmp_path, monkeypatch, "run") == 0
    assert not (tmp_path / ".goldgate" / "diagnosis").exists()
    first = json.loads((tmp_path / "goldgate-report" / "result.json").read_text())
    counts = first["suites"][0]["diagnosis"]["categories"]["empty"]
    assert counts == {"baseline": 500, "current": 1000, "new": 500, "regressed": 500}

    def diagnosis() -> object:
        result = json.loads((tmp_path / "goldgate-report" / "result.json").read_text())
        return result["suites"][0]["diagnosis"]["categories"]

    # other detector settings: the stored masks do not hold; diagnosed afresh, then cached
    config = tmp_path / "goldgate.yaml"
    config.write_text(config.read_text() + "diagnose: {length_drift: {ratio: 3.0}}\n")
    assert _goldgate(tmp_path, monkeypatch, "run") == 0
    cached = list((tmp_path / ".goldgate" / "diagnosis").glob("blessed-*.npy"))
    assert len(cached) == 1
    assert diagnosis() == first["suites"][0]["diagnosis"]["categories"]
    # the cached masks are read back: the same counts; a damaged cache is diagnosed afresh
    assert _goldgate(tmp_path, monkeypatch, "run") == 0
    assert diagnosis() == first["suites"][0]["diagnosis"]["categories"]
    cached[0].write_bytes(b"not numpy")
    assert _goldgate(tmp_path, monkeypatch, "run") == 0
    assert diagnosis() == first["suites"][0]["diagnosis"]["categories"]
    # stored masks that were tampered with are not trusted: diagnosed afresh, same answers
    config.write_text(config.read_text().replace("diagnose: {length_drift: {ratio: 3.0}}\n", ""))
    stored["data"] = stored["data"][:-8] + "AAAAAAA="
    (tmp_path / "goldgate.baseline.json").write_text(json.dumps(baseline))
    shutil.rmtree(tmp_path / ".goldgate" / "diagnosis")
    assert _goldgate(tmp_path, monkeypatch, "run") == 0
    assert diagnosis() == first["suites"][0]["diagnosis"]["categories"]


def test_patterns_show_control_characters_escaped() -> None:
    items = [Unexplained(f"a{i}", f"\u202eevil \x1b[31m now {i}", "old") for i in range(4)]
    (cluster,) = find_clusters(items)
    assert cluster.pattern == "\\u202eevil \\x1b[31m now"


def test_length_drift_options_reach_a_detector_that_takes_them() -> None:
    from goldgate.diagnosis.chosen import _with_options

    class Drift:
        name = "length_drift"
        version = 1

        def __init__(self, ratio: float = 3.0) -> None:
            self.ratio = ratio

        def __call__(self, example: object, context: object) -> None:
            return None

    class Fixed:
        name = "length_drift"
        version = 1

        def __call__(self, example: object, context: object) -> None:
            return None

    made = _with_options(Drift(), {"ratio": 2.5})
    assert isinstance(made, Drift) and made.ratio == 2.5
    fixed = Fixed()
    assert _with_options(fixed, {"ratio": 2.5}) is fixed  # nothing to take it: as it is
