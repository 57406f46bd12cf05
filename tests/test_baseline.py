"""The baseline file: stable bytes, atomic writes, strict reading, git revisions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from goldgate.errors import BaselineError
from goldgate.io import atomic
from goldgate.model.baseline import (
    Baseline,
    BaselineExample,
    BaselineMetric,
    SuiteBaseline,
    strip_nrefs,
)
from goldgate.model.baseline_io import (
    dumps_baseline,
    read_baseline,
    read_baseline_at_ref,
    write_baseline,
)
from goldgate.model.baseline_verify import verify_suite
from goldgate.model.golden_hashing import record_digest


def make_baseline(score_shift: float = 0.0, samples: int = 1) -> Baseline:
    examples = {
        f"ex-{i}": BaselineExample(
            digest=record_digest(f"input {i}", [f"ref {i}"], ["t"] if i % 2 else []),
            outputs=[f"out {i} ünïcode"] * samples,
            stats={"accuracy": [[float(i % 2), 1.0]] * samples},
        )
        for i in (3, 1, 2)
    }
    suite = SuiteBaseline(
        golden_hash="sha256:abc",
        goldens="goldens/qa.jsonl",
        samples=samples,
        metrics={
            "accuracy": BaselineMetric(
                signature="nrefs:1|kind:accuracy|version:0.1.0",
                score=66.66666666666667 + score_shift,
                stat_names=["correct", "count"],
                components={"precisions": [1.0, 0.5]},
            )
        },
        examples=examples,
    )
    return Baseline(goldgate_version="0.1.0", suites={"qa": suite})


def test_round_trip_and_stable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "goldgate.baseline.json"
    original = make_baseline()
    write_baseline(path, original)
    first = path.read_bytes()
    assert read_baseline(path) == original
    write_baseline(path, read_baseline(path))
    assert path.read_bytes() == first
    text = first.decode("utf-8")
    # sorted ids, readable unicode, one line per list of numbers
    assert text.index('"ex-1"') < text.index('"ex-2"') < text.index('"ex-3"')
    assert "ünïcode" in text
    assert '"accuracy": [[1.0, 1.0]]' in text
    assert json.loads(text)["schema_version"] == "goldgate.baseline/1"


def test_stats_array_shape_and_order() -> None:
    suite = make_baseline(samples=2).suites["qa"]
    array = suite.stats_array("accuracy", ["ex-2", "ex-3"])
    assert array.shape == (2, 2, 2)
    assert np.array_equal(array[0], [[0.0, 1.0], [1.0, 1.0]])
    assert suite.stats_array("accuracy", []).shape == (2, 0, 2)


def test_interrupted_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "goldgate.baseline.json"
    write_baseline(path, make_baseline())
    before = path.read_bytes()

    def crash(src: str, dst: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_baseline(path, make_baseline(score_shift=1.0))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_write_creates_the_directory(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "dir" / "b.json"
    write_baseline(path, make_baseline())
    assert read_baseline(path).suites["qa"].samples == 1


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match=r"no baseline; run `goldgate bless`"):
        read_baseline(tmp_path / "nope.json")


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda t: t[: len(t) // 2], r"invalid JSON at line \d+ column \d+"),
        (lambda t: "[]", "expected a JSON object"),
        (lambda t: t.replace("goldgate.baseline/1", "goldgate.baseline/9"), "schema_version"),
        (lambda t: t.replace('"samples": 1', '"samples": "x"'), r"suites\.qa\.samples"),
        (lambda t: t.replace('"accuracy": [[1.0, 1.0]]', '"accuracy": [[1.0]]'), "ex-1"),
        (lambda t: t.replace('"golden_hash"', '"golden_hashh"'), "golden_hash"),
        # json reads NaN and Infinity; a hand-edited number must not reach the gate's arithmetic
        (lambda t: t.replace('"accuracy": [[1.0, 1.0]]', '"accuracy": [[NaN, 1.0]]'), "finite"),
        (lambda t: t.replace("66.66666666666667", "Infinity"), "finite"),
        (lambda t: t.replace("66.66666666666667", "1e999"), "finite"),
    ],
)
def test_damaged_files_are_named(tmp_path: Path, damage, message: str) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "goldgate.baseline.json"
    write_baseline(path, make_baseline())
    path.write_text(damage(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(BaselineError, match=message) as info:
        read_baseline(path)
    assert str(path) in str(info.value)


def test_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(BaselineError, match="not UTF-8"):
        read_baseline(path)


def test_verify_names_suite_and_metric() -> None:
    suite = make_baseline().suites["qa"]
    signature = "nrefs:1|kind:accuracy|version:0.1.0"
    verify_suite(
        suite, suite="qa", golden_hash="sha256:abc", signatures={"accuracy": signature}, source="b"
    )
    # a metric the baseline has never seen is not an error: it just has no baseline yet
    verify_suite(suite, suite="qa", golden_hash="sha256:abc", signatures={"new": "x"}, source="b")
    with pytest.raises(BaselineError, match=r"suite 'qa'.*golden set changed") as info:
        verify_suite(suite, suite="qa", golden_hash="sha256:def", signatures={}, source="b")
    assert "--new-only" not in str(info.value)
    digests = {i: e.digest for i, e in suite.examples.items()}
    added = {**digests, "ex-9": "new"}
    with pytest.raises(BaselineError, match=r"1 added: ex-9; run `goldgate bless --new-only`"):
        verify_suite(suite, suite="qa", golden_hash="x", signatures={}, source="b", digests=added)
    edited = {**digests, "ex-1": "other"}
    del edited["ex-2"]
    with pytest.raises(
        BaselineError, match=r"1 removed: ex-2; 1 changed: ex-1; run `goldgate bless` to"
    ):
        verify_suite(suite, suite="qa", golden_hash="x", signatures={}, source="b", digests=edited)
    with pytest.raises(BaselineError, match=r"suite 'qa', metric 'accuracy': the signature"):
        verify_suite(
            suite,
            suite="qa",
            golden_hash="sha256:abc",
            signatures={"accuracy": signature.replace("kind:accuracy", "kind:other")},
            source="b",
        )


def test_verify_refuses_examples_that_disagree_with_a_matching_golden_hash() -> None:
    # A hand edit or a bad merge of the file: the hash says "same goldens" but an example is
    # gone, so the gate would pair a subset and show a baseline score over fewer examples.
    suite = make_baseline().suites["qa"]
    digests = {i: e.digest for i, e in suite.examples.items()}
    verify_suite(
        suite, suite="qa", golden_hash="sha256:abc", signatures={}, source="b", digests=digests
    )
    del suite.examples["ex-2"]
    with pytest.raises(
        BaselineError, match=r"b: damaged baseline: suite 'qa'.*example ex-2 is missing"
    ):
        verify_suite(
            suite, suite="qa", golden_hash="sha256:abc", signatures={}, source="b", digests=digests
        )


def test_record_digest_and_strip_nrefs() -> None:
    assert record_digest("q", ["a"], ["x", "y"]) == record_digest("q", ["a"], ["y", "x"])
    assert record_digest("q", ["a"], []) != record_digest("q", ["b"], [])
    assert record_digest({"b": 1, "a": 2}, ["a"], []) == record_digest({"a": 2, "b": 1}, ["a"], [])
    assert strip_nrefs("nrefs:var|case:mixed|version:1") == "case:mixed|version:1"


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@needs_git
def test_read_at_ref_sees_the_committed_version(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "README").write_text("x\n")
    _git(tmp_path, "add", "README")
    _git(tmp_path, "commit", "-qm", "first")
    first = _git(tmp_path, "rev-parse", "HEAD")
    sub = tmp_path / "project"
    path = sub / "goldgate.baseline.json"
    write_baseline(path, make_baseline())
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "baseline")
    # The working copy (as in a PR that edits the baseline) differs from the commit.
    write_baseline(path, make_baseline(score_shift=5.0))

    at_head = read_baseline_at_ref(Path("goldgate.baseline.json"), "HEAD", sub)
    assert at_head == make_baseline()
    assert read_baseline(path) != at_head
    # Not there at the first commit: no baseline, not an error.
    assert read_baseline_at_ref(Path("goldgate.baseline.json"), first, sub) is None
    with pytest.raises(BaselineError, match="unknown git revision 'no-such-branch'"):
        read_baseline_at_ref(Path("goldgate.baseline.json"), "no-such-branch", sub)


@needs_git
def test_read_at_ref_outside_a_repository(tmp_path: Path) -> None:
    with pytest.raises(BaselineError, match="--baseline-ref HEAD"):
        read_baseline_at_ref(Path("b.json"), "HEAD", tmp_path)


@needs_git
def test_damaged_at_ref_names_the_revision(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "b.json").write_text("{not json")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "broken")
    with pytest.raises(BaselineError, match=r"HEAD:b\.json: damaged baseline"):
        read_baseline_at_ref(Path("b.json"), "HEAD", tmp_path)


def test_dumps_is_plain_json() -> None:
    text = dumps_baseline(make_baseline())
    assert Baseline.model_validate(json.loads(text)) == make_baseline()
