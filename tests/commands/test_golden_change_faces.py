"""A golden set that changed since the baseline, as every face shows it: nothing shared with
the baseline, the shared part's score beside the whole set's, ids no longer in the set."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from goldgate.cli.main import main

NOTHING = "nothing to compare: 0 shared examples"


def _rewrite(path: Path, change: dict[str, str], key: str = "id") -> None:
    """Rewrite one field of every row of a JSON Lines file (``old → new`` substrings)."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        value = row[key]
        for old, new in change.items():
            value = (
                [item.replace(old, new) for item in value]
                if isinstance(value, list)
                else value.replace(old, new)
            )
        row[key] = value
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _reports(directory: Path) -> dict[str, str]:
    return {
        name: (directory / name).read_text()
        for name in ("report.md", "report.html", "junit.xml", "result.json")
    }


def test_every_id_renamed_is_nothing_to_compare_in_every_report(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    for name in ("goldens/qa.jsonl", "predictions/qa.jsonl"):
        _rewrite(scaffold / name, {"qa-": "QA-"})
    capsys.readouterr()
    # was: exit 3, an IndexError in result.py, while check passed
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    assert NOTHING in out and "bless to start afresh" in out
    for name, text in _reports(scaffold / "goldgate-report").items():
        assert NOTHING in text, name
    result = json.loads((scaffold / "goldgate-report" / "result.json").read_text())
    qa = result["suites"][0]
    assert qa["golden_change"]["n_shared"] == 0
    statuses = {(c["rule"], c["metric"]): c["status"] for c in qa["checks"]}
    assert statuses[("min", "exact_match")] == "pass"
    assert statuses[("max_drop", "exact_match")] == "skipped"
    # the skipped checks say why: not "no baseline" (there is one), nothing shared with it
    assert all(
        "0 shared examples with the baseline" in c["message"]
        for c in qa["checks"]
        if c["status"] == "skipped"
    )
    # re-rendered from the saved result, every format says it too
    for fmt in ("md", "html", "junit", "json"):
        assert main(["report", "goldgate-report/result.json", "-f", fmt]) == 0
        assert NOTHING in capsys.readouterr().out, fmt
    assert main(["check"]) == 0
    assert NOTHING in capsys.readouterr().out


def test_every_reference_edited_still_judges_min_on_the_whole_set(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    golden = scaffold / "goldens" / "qa.jsonl"
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    for row in rows:
        row["references"] = [f"{reference} (edited)" for reference in row["references"]]
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows))
    capsys.readouterr()
    # a min rule fails on the whole set: a regression, exit 1, not a crash (exit 3)
    assert main(["run"]) == 1
    out = capsys.readouterr().out
    assert NOTHING in out
    assert "below the minimum" in out
    with gzip.open(scaffold / "goldgate-report" / "examples.jsonl.gz", "rt") as handle:
        rows = [json.loads(line) for line in handle]
    qa = [row for row in rows if row["suite"] == "qa"]
    assert len(qa) == 30 and not any("baseline_scores" in row for row in qa)


def test_predictions_for_examples_removed_from_the_golden_set_are_a_warning(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    golden = scaffold / "goldens" / "qa.jsonl"
    golden.write_text("".join(golden.read_text().splitlines(keepends=True)[:-2]))
    capsys.readouterr()
    # was: exit 2, "2 id(s) not in the golden set", though the pipeline only answered the
    # examples a pull request removed
    assert main(["run"]) == 0
    out = "".join(capsys.readouterr())
    assert "predictions/qa.jsonl: 2 id(s) not in the golden set" in out
    assert "goldens/qa.jsonl: 'qa-029' (line 29)" in out
    assert "'qa-030' (line 30); left out (system.strict: true makes this an error)" in out
    assert "28 shared examples" in out
    config = scaffold / "goldgate.yaml"
    config.write_text(config.read_text().replace("system:\n", "system:\n  strict: true\n"))
    assert main(["run"]) == 2
    assert "2 id(s) not in the golden set" in capsys.readouterr().err


@pytest.mark.parametrize(("cap", "code"), [(2, 0), (1, 1)])
def test_max_removed_counts_edits_and_passes_at_exactly_its_cap(
    scaffold: Path, capsys: pytest.CaptureFixture[str], cap: int, code: int
) -> None:
    assert main(["bless", "-q"]) == 0
    golden = scaffold / "goldens" / "qa.jsonl"
    rows = [json.loads(line) for line in golden.read_text().splitlines()]
    rows[3]["references"] = ["an edited reference"]  # an edit counts as a removal
    del rows[7]  # and one removed: 2 in all
    golden.write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = scaffold / "goldgate.yaml"
    config.write_text(config.read_text() + f"max_removed: {cap}\n")
    capsys.readouterr()
    assert main(["run"]) == code
    result = json.loads((scaffold / "goldgate-report" / "result.json").read_text())
    (check,) = [c for c in result["suites"][0]["checks"] if c["rule"] == "max_removed"]
    assert check["status"] == ("pass" if code == 0 else "fail")
    assert check["message"].startswith("qa: 2 golden examples removed or edited since the baseline")


def test_with_added_examples_the_table_shows_the_shared_score_the_delta_is_on(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    for name, row in (
        ("goldens/qa.jsonl", {"id": "new-1", "input": "q", "references": ["zzz"]}),
        ("predictions/qa.jsonl", {"id": "new-1", "output": "nope"}),
    ):
        with (scaffold / name).open("a") as handle:
            handle.write(json.dumps(row) + "\n")
    capsys.readouterr()
    assert main(["run"]) == 0
    out = capsys.readouterr().out
    result = json.loads((scaffold / "goldgate-report" / "result.json").read_text())
    (exact,) = [m for m in result["suites"][0]["metrics"] if m["metric"] == "exact_match"]
    # the whole set's score (a new example, wrong) and the shared examples' (unchanged):
    # the delta (0) is the shared ones', and was shown beside the whole set's score alone
    assert exact["current"] == pytest.approx(100 * 24 / 31)
    assert exact["current_shared"] == pytest.approx(exact["baseline"] + exact["delta"])
    shown = f"{exact['current']:.2f} (shared {exact['current_shared']:.2f})"
    assert shown in out
    report = (scaffold / "goldgate-report" / "report.md").read_text()
    assert f"| {shown} |" in report
    assert shown in (scaffold / "goldgate-report" / "report.html").read_text()
    (translate,) = [m for m in result["suites"][1]["metrics"] if m["metric"] == "bleu"]
    assert translate.get("current_shared") is None  # an unchanged set: one score
