"""Behaviours users rely on, pinned through ``goldgate run`` (each survived a deliberately
broken copy of the code before): what "right" means with samples, the p == alpha boundary,
a rule's slices under a suite without slices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main
from goldgate.model.result import RunResult


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def result(root: Path) -> dict[str, Any]:
    # result.json with its examples read back from examples.jsonl.gz beside it
    data: dict[str, Any] = RunResult.from_json_file(root / "out" / "result.json").model_dump(
        mode="json"
    )
    return data


# -- samples: 2, and what counts as "right" -------------------------------------------------

SAMPLES_CONFIG = """
version: 1
system: {predictions: p.jsonl, samples: 2}
suites:
  qa:
    goldens: g.jsonl
    metrics: {exact_match: {}}
    gate: {exact_match: {max_flips: 0}}
significance: off
report: {dir: out, formats: [json]}
"""


def _samples_project(root: Path) -> None:
    write_jsonl(
        root / "g.jsonl",
        [{"id": f"q{i}", "input": f"x{i}", "references": ["yes"]} for i in range(4)],
    )
    (root / "goldgate.yaml").write_text(SAMPLES_CONFIG)


def _answers(root: Path, first: list[str]) -> None:
    """q0's two samples as given; the other examples right in both."""
    rows = [{"id": "q0", "outputs": first}]
    rows += [{"id": f"q{i}", "outputs": ["yes", "yes"]} for i in range(1, 4)]
    write_jsonl(root / "p.jsonl", rows)


def test_right_in_half_the_samples_scores_50_and_still_counts_as_right(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _samples_project(here)
    _answers(here, ["yes", "yes"])
    assert main(["bless", "-q"]) == 0
    _answers(here, ["yes", "no"])  # 100 -> 50: right in one sample of two
    assert main(["run", "-q"]) == 0
    suite = result(here)["suites"][0]
    q0 = next(example for example in suite["examples"] if example["id"] == "q0")
    assert q0["scores"]["exact_match"] == 50.0
    assert q0["flipped_to_wrong"] == []

    assert main(["bless", "-q"]) == 0  # 50 is the new normal
    _answers(here, ["no", "no"])  # 50 -> 0: right in no sample
    capsys.readouterr()
    assert main(["run", "-q"]) == 1
    assert "exact_match" in capsys.readouterr().out
    q0 = next(e for e in result(here)["suites"][0]["examples"] if e["id"] == "q0")
    assert q0["flipped_to_wrong"] == ["exact_match"]


# -- p == alpha -----------------------------------------------------------------------------

ALPHA_CONFIG = """
version: 1
system: {{predictions: p.jsonl}}
suites:
  qa:
    goldens: g.jsonl
    metrics: {{exact_match: {{}}}}
    gate: {{exact_match: {{max_drop: 1.0}}}}
significance: {{resamples: {resamples}, alpha: 0.05, seed: 0}}
report: {{dir: out, formats: [json]}}
"""


@pytest.mark.parametrize(
    ("resamples", "p_value", "status", "code"),
    [
        (19, 1 / 20, "forgiven", 0),  # p == alpha: not below it, so not significant
        (20, 1 / 21, "fail", 1),  # the smallest step below alpha
    ],
)
def test_a_drop_is_significant_only_when_p_is_below_alpha(
    here: Path, resamples: int, p_value: float, status: str, code: int
) -> None:
    """Every example drops from right to wrong: every resample gives the same delta, so no
    resample is as extreme as it after centring, and p = 1 / (resamples + 1) exactly."""
    write_jsonl(
        here / "g.jsonl",
        [{"id": f"q{i}", "input": f"x{i}", "references": ["yes"]} for i in range(10)],
    )
    (here / "goldgate.yaml").write_text(ALPHA_CONFIG.format(resamples=resamples))
    write_jsonl(here / "p.jsonl", [{"id": f"q{i}", "output": "yes"} for i in range(10)])
    assert main(["bless", "-q"]) == 0
    write_jsonl(here / "p.jsonl", [{"id": f"q{i}", "output": "no"} for i in range(10)])
    assert main(["run", "-q"]) == code
    suite = result(here)["suites"][0]
    (metric,) = suite["metrics"]
    assert metric["p_value"] == pytest.approx(p_value, abs=1e-12)
    (check,) = [c for c in suite["checks"] if c["rule"] == "max_drop"]
    assert check["status"] == status


# -- slices: false on the suite, slices: true on a rule -------------------------------------

SLICES_CONFIG = """
version: 1
system: {predictions: p.jsonl}
suites:
  qa:
    goldens: g.jsonl
    slices: false
    metrics: {exact_match: {}}
    gate: {exact_match: {max_drop: 5.0, slices: true}}
significance: off
report: {dir: out, formats: [json]}
"""


def test_a_rule_with_slices_is_checked_per_tag_even_when_the_suite_shows_no_slices(
    here: Path,
) -> None:
    goldens = [
        {
            "id": f"q{i}",
            "input": f"x{i}",
            "references": ["yes"],
            "tags": ["legal" if i < 2 else "news"],
        }
        for i in range(20)
    ]
    write_jsonl(here / "g.jsonl", goldens)
    (here / "goldgate.yaml").write_text(SLICES_CONFIG)
    write_jsonl(here / "p.jsonl", [{"id": f"q{i}", "output": "yes"} for i in range(20)])
    assert main(["bless", "-q"]) == 0
    # One legal example wrong: the suite drops 5 points (allowed), the legal slice 50 (not).
    write_jsonl(
        here / "p.jsonl", [{"id": f"q{i}", "output": "no" if i == 0 else "yes"} for i in range(20)]
    )
    assert main(["run", "-q"]) == 1
    suite = result(here)["suites"][0]
    statuses = {(c["slice"], c["rule"]): c["status"] for c in suite["checks"]}
    assert statuses[(None, "max_drop")] == "pass"
    assert statuses[("legal", "max_drop")] == "fail"
    assert statuses[("news", "max_drop")] == "pass"
    assert suite["slices"] == []  # no slice tables in the reports
