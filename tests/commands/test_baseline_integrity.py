"""A damaged or tampered baseline is refused (exit 2) naming file, suite and metric — through
``goldgate run`` and ``goldgate check`` on a scaffolded project."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main

Tamper = Callable[[dict[str, Any]], None]


def _edit(root: Path, tamper: Tamper) -> None:
    path = root / "goldgate.baseline.json"
    data = json.loads(path.read_text())
    tamper(data)
    path.write_text(json.dumps(data, indent=1))


def _qa(data: dict[str, Any]) -> dict[str, Any]:
    suite: dict[str, Any] = data["suites"]["qa"]
    return suite


def _raise_the_score(data: dict[str, Any]) -> None:
    _qa(data)["metrics"]["exact_match"]["score"] += 0.5


def _zero_the_statistics(data: dict[str, Any]) -> None:
    """The attack of the issue: zeroed statistics turn a real drop into an "improvement"."""
    for example in _qa(data)["examples"].values():
        example["stats"]["exact_match"] = [
            [0.0] * len(row) for row in example["stats"]["exact_match"]
        ]


@pytest.mark.parametrize("tamper", [_raise_the_score, _zero_the_statistics])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_score_that_does_not_follow_from_its_statistics_is_a_damaged_baseline(
    scaffold: Path, capsys: pytest.CaptureFixture[str], tamper: Tamper, command: str
) -> None:
    assert main(["bless", "-q"]) == 0
    _edit(scaffold, tamper)
    capsys.readouterr()
    assert main([command, "-q"] if command == "run" else [command]) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "goldgate.baseline.json: damaged baseline: suite 'qa', metric 'exact_match': the" in text
    assert "does not follow from the stored per-example statistics" in text
    assert "Traceback" not in text


def test_float_noise_in_a_stored_score_is_not_damage(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scores are recomputed in the file's order (sorted ids), not the golden set's."""
    assert main(["bless", "-q"]) == 0

    def nudge(data: dict[str, Any]) -> None:
        for suite in data["suites"].values():
            for metric in suite["metrics"].values():
                metric["score"] += 1e-9

    _edit(scaffold, nudge)
    assert main(["run", "-q"]) == 0


def test_a_baseline_with_the_wrong_number_of_sample_rows_is_damaged_naming_the_file(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0

    def extra_row(data: dict[str, Any]) -> None:
        example = next(iter(_qa(data)["examples"].values()))
        example["stats"]["exact_match"].append(example["stats"]["exact_match"][0])

    _edit(scaffold, extra_row)
    capsys.readouterr()
    assert main(["run", "-q"]) == 2
    err = capsys.readouterr().err
    assert "goldgate.baseline.json: damaged baseline: suite 'qa', example" in err
    assert "statistics of metric 'exact_match' do not have the shape 1×" in err


def test_an_extra_example_under_a_matching_golden_hash_is_damage(
    scaffold: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand edit or a bad merge: the hash says same goldens, the examples say otherwise."""
    assert main(["bless", "-q"]) == 0

    def extra_example(data: dict[str, Any]) -> None:
        examples = _qa(data)["examples"]
        examples["smuggled"] = dict(next(iter(examples.values())))

    _edit(scaffold, extra_example)
    capsys.readouterr()
    assert main(["run", "-q"]) == 2
    err = capsys.readouterr().err
    assert "damaged baseline: suite 'qa': its golden hash matches the golden set" in err
    assert "example smuggled is not in the golden set" in err
