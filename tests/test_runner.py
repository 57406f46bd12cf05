"""The runner: run, bless (full and --new-only), check, baselines at git revisions."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import goldgate
from goldgate.errors import BaselineError, GoldgateError, UsageError
from goldgate.model.baseline_io import read_baseline
from goldgate.model.config_loading import load_config
from goldgate.model.result import CheckStatus, RunResult, Verdict
from goldgate.runner import bless, check, run

CONFIG = """\
version: 1
system:
  predictions: preds/{{suite}}.jsonl
  samples: {samples}
suites:
  qa:
    goldens: goldens/qa.jsonl
    metrics:
{metrics}
    gate:
      exact_match: {{min: 50.0, max_drop: 2.0, max_flips: 1}}
  other:
    goldens: goldens/other.jsonl
    metrics: {{exact_match: {{}}}}
    gate: {{exact_match: {{max_drop: 5.0}}}}
significance: {significance}
report: {{dir: out, formats: [json]}}
"""

QA_METRICS = "      exact_match: {normalizer: squad}\n      token_f1: {normalizer: squad}"


class Project:
    """A goldgate project in a temporary directory, with predictions to rewrite at will."""

    def __init__(self, root: Path, n: int = 30, samples: int = 1) -> None:
        self.root = root
        self.samples = samples
        self.answers = {f"q{i:03d}": f"answer {i}" for i in range(n)}
        self.tags = {
            example_id: ["even" if i % 2 == 0 else "odd"]
            for i, example_id in enumerate(self.answers)
        }
        self.write_config()
        self.write_goldens()
        # 25 of 30 right
        self.outputs = {
            example_id: (answer if i % 6 else "wrong")
            for i, (example_id, answer) in enumerate(self.answers.items())
        }
        self.write_predictions()
        self.write_other(["a", "b", "c"], ["a", "b", "x"])

    def write_config(self, metrics: str = QA_METRICS, significance: str = "{seed: 0}") -> None:
        (self.root / "goldgate.yaml").write_text(
            CONFIG.format(samples=self.samples, metrics=metrics, significance=significance)
        )

    def write_goldens(self) -> None:
        rows = [
            {"id": i, "input": f"question {i}", "references": [a], "tags": self.tags[i]}
            for i, a in self.answers.items()
        ]
        _write_jsonl(self.root / "goldens" / "qa.jsonl", rows)

    def write_predictions(self) -> None:
        if self.samples == 1:
            rows = [{"id": i, "output": o} for i, o in self.outputs.items()]
        else:
            rows = [{"id": i, "outputs": [o] * self.samples} for i, o in self.outputs.items()]
        _write_jsonl(self.root / "preds" / "qa.jsonl", rows)

    def write_other(self, references: list[str], outputs: list[str]) -> None:
        _write_jsonl(
            self.root / "goldens" / "other.jsonl",
            [{"id": f"o{i}", "input": i, "reference": r} for i, r in enumerate(references)],
        )
        _write_jsonl(
            self.root / "preds" / "other.jsonl",
            [
                {"id": f"o{i}", "output": o}
                if self.samples == 1
                else {"id": f"o{i}", "outputs": [o] * self.samples}
                for i, o in enumerate(outputs)
            ],
        )

    def config(self) -> goldgate.Config:
        return load_config(self.root / "goldgate.yaml")

    def break_answers(self, count: int) -> None:
        right = [i for i, o in self.outputs.items() if o == self.answers[i]]
        for example_id in right[:count]:
            self.outputs[example_id] = "nonsense"
        self.write_predictions()


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _without_time(result: RunResult) -> dict[str, Any]:
    data = json.loads(result.to_json())
    data.pop("created_at")
    return data


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_run_without_baseline_checks_min_only_and_hints_to_bless(project: Project) -> None:
    result = run(project.config())
    assert result.verdict is Verdict.PASS
    assert not result.baseline_found
    assert result.baseline == "goldgate.baseline.json"
    assert "run `goldgate bless`" in result.hints[0]
    qa = result.suites[0]
    assert qa.name == "qa" and qa.goldens == "goldens/qa.jsonl" and qa.n_examples == 30
    statuses = {c.rule: c.status for c in qa.checks}
    assert statuses == {
        "min": CheckStatus.PASS,
        "max_drop": CheckStatus.SKIPPED,
        "max_flips": CheckStatus.SKIPPED,
    }
    assert qa.metrics[0].current == pytest.approx(100 * 25 / 30)
    assert [s.tag for s in qa.slices] == ["even", "odd"]
    first = qa.examples[0]
    assert (first.id, first.line, first.output, first.scores["exact_match"]) == (
        "q000",
        1,
        "wrong",
        0.0,
    )
    saved = RunResult.from_json_file(project.root / "out" / "result.json")
    assert saved == result


def test_bless_then_run_passes_with_zero_deltas_and_same_json(project: Project) -> None:
    config = project.config()
    path = bless(config)
    assert path == project.root / "goldgate.baseline.json"
    first = run(config)
    second = run(config)
    assert first.verdict is Verdict.PASS and first.baseline_found
    assert _without_time(first) == _without_time(second)
    qa = first.suites[0]
    assert all(m.delta == 0.0 for m in qa.metrics)
    assert qa.metrics[0].interval is not None
    example = qa.examples[1]
    assert example.baseline_output == example.output == "answer 1"
    assert example.baseline_scores == example.scores
    assert not example.new


def test_blessing_the_same_run_gives_the_same_bytes(project: Project) -> None:
    config = project.config()
    path = bless(config)
    before = path.read_bytes()
    bless(config)
    assert path.read_bytes() == before


def test_a_real_regression_names_suite_and_metric(project: Project) -> None:
    config = project.config()
    bless(config)
    project.break_answers(8)
    result = run(config)
    assert result.verdict is Verdict.REGRESSED
    assert result.exit_code == 1
    failed = [c for c in result.checks() if c.status is CheckStatus.FAIL]
    assert {c.rule for c in failed} == {"max_drop", "max_flips"}
    assert all(c.suite == "qa" and c.metric == "exact_match" for c in failed)
    flips = next(c for c in failed if c.rule == "max_flips")
    assert flips.flips == 8
    flipped = [e.id for e in result.suites[0].examples if e.flipped_to_wrong]
    assert len(flipped) == 8


def test_a_one_example_wobble_is_forgiven(project: Project) -> None:
    config = project.config()
    bless(config)
    project.break_answers(1)
    result = run(config)
    drop = next(c for c in result.checks() if c.rule == "max_drop")
    assert drop.status is CheckStatus.FORGIVEN
    assert result.verdict is Verdict.PASS
    # ...but max_flips is a count, never forgiven: 1 flip is allowed, 2 are not
    project.break_answers(1)
    assert run(config).verdict is Verdict.REGRESSED


def test_significance_off_gives_plain_thresholds(project: Project) -> None:
    project.write_config(significance="off")
    config = project.config()
    bless(config)
    project.break_answers(1)
    result = run(config)
    assert result.significance is None
    drop = next(c for c in result.checks() if c.rule == "max_drop")
    assert drop.status is CheckStatus.FAIL and drop.interval is None


def test_improvement_suggests_blessing(project: Project) -> None:
    config = project.config()
    bless(config)
    project.outputs = dict(project.answers)
    project.write_predictions()
    result = run(config)
    assert result.verdict is Verdict.IMPROVED
    assert result.exit_code == 0
    assert any("improved" in h and "goldgate bless" in h for h in result.hints)


def test_a_broken_suite_is_an_error_and_the_others_still_run(project: Project) -> None:
    config = project.config()
    (project.root / "preds" / "other.jsonl").write_text('{"id": "o0", "output": "a"}\n')
    result = run(config)
    assert result.verdict is Verdict.ERROR and result.exit_code == 2
    qa, other = result.suites
    assert qa.verdict is Verdict.PASS
    assert other.verdict is Verdict.ERROR and other.error
    assert "o1" in other.error
    assert result.errors == [other.error]


def test_changed_golden_set_is_compared_on_the_shared_examples(project: Project) -> None:
    config = project.config()
    bless(config)
    project.answers["q001"] = "another answer"
    project.write_goldens()
    result = run(config)
    assert result.verdict is Verdict.PASS
    change = result.suites[0].golden_change
    assert change is not None and [item.id for item in change.edited] == ["q001"]
    assert change.n_shared == result.suites[0].n_examples - 1


def test_changed_golden_set_is_refused_under_on_golden_change_refuse(project: Project) -> None:
    config = project.config().model_copy(update={"on_golden_change": "refuse"})
    bless(config)
    project.answers["q001"] = "another answer"
    project.write_goldens()
    result = run(config)
    assert result.verdict is Verdict.ERROR
    error = result.suites[0].error or ""
    assert "suite 'qa'" in error and "1 changed: q001" in error


def test_changed_signature_is_refused_naming_suite_and_metric(project: Project) -> None:
    config = project.config()
    bless(config)
    project.write_config(
        metrics="      exact_match: {normalizer: lower}\n      token_f1: {normalizer: squad}"
    )
    result = run(project.config())
    error = result.suites[0].error or ""
    assert "suite 'qa', metric 'exact_match': the signature differs" in error


def test_damaged_baseline_raises(project: Project) -> None:
    config = project.config()
    path = bless(config)
    path.write_text(path.read_text()[:200])
    with pytest.raises(BaselineError, match="damaged baseline"):
        run(config)
    # a full bless repairs it
    bless(config)
    assert run(config).verdict is Verdict.PASS


def test_bless_new_only_adds_new_examples_and_keeps_the_rest(project: Project) -> None:
    config = project.config()
    bless(config)
    blessed = read_baseline(config.baseline).suites["qa"]
    # today: two new examples, and an old one answered differently (not to be re-accepted)
    project.answers["q100"] = "answer 100"
    project.answers["q101"] = "answer 101"
    project.tags["q100"] = project.tags["q101"] = ["new"]
    project.write_goldens()
    project.outputs["q100"] = "answer 100"
    project.outputs["q101"] = "wrong"
    project.outputs["q000"] = "answer 0"  # was wrong when blessed
    project.write_predictions()
    changed = run(config).suites[0]
    assert changed.error is None and changed.golden_change is not None
    assert changed.golden_change.added == ["q100", "q101"]
    with pytest.raises(BaselineError, match="2 added: q100, q101"):
        raise_first_error(run(config.model_copy(update={"on_golden_change": "refuse"})))

    bless(config, new_only=True)
    merged = read_baseline(config.baseline).suites["qa"]
    assert set(merged.examples) == set(blessed.examples) | {"q100", "q101"}
    assert merged.examples["q000"] == blessed.examples["q000"]
    assert merged.examples["q100"].outputs == ["answer 100"]
    assert merged.metrics["exact_match"].score == pytest.approx(100 * 26 / 32)
    result = run(config)
    assert result.suites[0].error is None
    assert result.suites[0].metrics[0].delta == pytest.approx(100 / 32)
    q000 = next(e for e in result.suites[0].examples if e.id == "q000")
    assert q000.baseline_output == "wrong" and q000.flipped_to_right == ["exact_match"]


def raise_first_error(result: RunResult) -> None:
    for suite in result.suites:
        if suite.error:
            raise BaselineError(suite.error)


def test_bless_new_only_refuses_changed_examples(project: Project) -> None:
    config = project.config()
    bless(config)
    project.answers["q003"] = "edited"
    project.write_goldens()
    with pytest.raises(BaselineError, match=r"example 'q003': changed since it was blessed"):
        bless(config, new_only=True)


def test_bless_new_only_adds_a_new_metric_whole(project: Project) -> None:
    project.write_config(metrics="      exact_match: {normalizer: squad}")
    bless(project.config())
    project.write_config()
    config = project.config()
    result = run(config)
    assert any("token_f1 not in the baseline yet" in h for h in result.hints)
    bless(config, new_only=True)
    assert set(read_baseline(config.baseline).suites["qa"].metrics) == {
        "exact_match",
        "token_f1",
    }
    assert run(config).suites[0].metrics[1].delta == 0.0


def test_bless_one_suite_keeps_the_others(project: Project) -> None:
    config = project.config()
    bless(config)
    before = read_baseline(config.baseline).suites["other"]
    project.write_other(["a", "b", "c"], ["a", "b", "c"])
    project.break_answers(3)
    bless(config, suites=["qa"])
    after = read_baseline(config.baseline)
    assert after.suites["other"] == before
    assert after.suites["qa"].metrics["exact_match"].score == pytest.approx(100 * 22 / 30)
    with pytest.raises(UsageError, match=r"no suite 'qaa'.*did you mean 'qa'"):
        bless(config, suites=["qaa"])


def test_run_selected_suites_only(project: Project) -> None:
    result = run(project.config(), suites=["other"], write_reports=False)
    assert [s.name for s in result.suites] == ["other"]
    assert not (project.root / "out").exists()


def test_samples_are_scored_and_averaged(tmp_path: Path) -> None:
    project = Project(tmp_path, samples=3)
    rows = []
    for i, (example_id, answer) in enumerate(project.answers.items()):
        outputs = [answer, answer if i % 2 else "no", "no"]
        rows.append({"id": example_id, "outputs": outputs})
    _write_jsonl(tmp_path / "preds" / "qa.jsonl", rows)
    result = run(project.config())
    exact = result.suites[0].metrics[0]
    assert exact.current == pytest.approx((100 + 50 + 0) / 3)
    assert result.suites[0].examples[0].scores["exact_match"] == pytest.approx(100 / 3)
    bless(project.config())
    assert read_baseline(project.config().baseline).suites["qa"].samples == 3
    assert run(project.config()).verdict is Verdict.PASS


def test_check_validates_without_running_the_system(project: Project) -> None:
    config = project.config()
    (project.root / "preds" / "qa.jsonl").unlink()  # check never reads outputs
    found = check(config)
    assert [(c.suite, c.error, c.in_baseline) for c in found] == [
        ("qa", None, False),
        ("other", None, False),
    ]
    project.write_predictions()
    bless(config)
    project.write_other(["a", "b", "z"], ["a", "b", "x"])
    found = check(config)
    assert found[0].error is None and found[0].in_baseline and found[0].note is None
    assert found[1].error is None and found[1].note is not None
    assert "(0 added, 1 edited, 0 removed)" in found[1].note
    found = check(config.model_copy(update={"on_golden_change": "refuse"}))
    assert found[1].error is not None and "suite 'other'" in found[1].error


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@needs_git
def test_baseline_ref_compares_with_the_target_branch(project: Project) -> None:
    config = project.config()
    bless(config)
    _git(project.root, "init", "-q", "-b", "main")
    _git(project.root, "add", ".")
    _git(project.root, "commit", "-qm", "baseline")
    # A pull request that degrades the system and re-blesses to hide it.
    project.break_answers(8)
    bless(config)
    assert run(config).verdict is Verdict.PASS
    against_main = run(config, baseline_ref="main")
    assert against_main.verdict is Verdict.REGRESSED
    assert against_main.baseline == "main:goldgate.baseline.json"
    with pytest.raises(BaselineError, match="unknown git revision"):
        run(config, baseline_ref="nope")


def test_result_json_is_written_whatever_the_formats(project: Project) -> None:
    result = run(project.config(), report_formats=["md"])
    out = project.root / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "examples.jsonl.gz",
        "report.md",
        "result.json",
    ]
    assert RunResult.from_json_file(out / "result.json") == result


def test_unwritable_report_dir_or_baseline_is_an_error_naming_the_path(project: Project) -> None:
    # A file where a folder should be (or the reverse): exit 2 with the path, not a traceback.
    (project.root / "out").write_text("a file, not a folder")
    with pytest.raises(GoldgateError, match=r"out.*: cannot write the reports"):
        run(project.config())
    (project.root / "out").unlink()
    config = project.config()
    config.baseline.mkdir()
    with pytest.raises(BaselineError, match=r"goldgate\.baseline\.json: cannot write the baseline"):
        bless(config)


def test_a_suite_missing_from_the_baseline_gets_a_hint(project: Project) -> None:
    config = project.config()
    bless(config, suites=["qa"])
    result = run(config)
    assert result.baseline_found and result.verdict is Verdict.PASS
    assert any("suite 'other' is not in the baseline yet" in h for h in result.hints)
    other = result.suites[1]
    assert [c.status for c in other.checks] == [CheckStatus.SKIPPED]


def test_the_history_takes_the_digests_the_golden_set_computed_as_it_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldgate.history import recording
    from goldgate.model import golden_hashing, goldens

    project = Project(tmp_path)
    config = project.config()
    result = run(config, write_reports=False, history_source=None)
    expected = {
        suite: [golden_hashing.record_digest(r.input, r.references, r.tags) for r in golden.records]
        for suite, golden in (
            (name, goldens.load_goldens(config.suites[name].goldens, name))
            for name in config.suites
        )
    }

    def computed_again(*_: object) -> str:
        raise AssertionError("a digest computed again for the history")

    monkeypatch.setattr(recording, "record_digest", computed_again)
    monkeypatch.setattr(recording, "loaded_digests", lambda _: None)
    record = recording.run_record(result, config, source="run", examples=True)
    assert {suite.suite: list(suite.digests) for suite in record.suites} == expected
