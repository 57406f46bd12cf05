"""``goldgate compare A B C``: a ranked matrix of the gate's own paired bootstrap, corrected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.gate.many import holm, letter_groups
from tests.commands.compare_project import build, gate_run, saved_run


@pytest.fixture
def three(here: Path) -> Path:
    """The project with each system's saved result in run-NAME/result.json."""
    build(here)
    for name in ("a", "b", "c"):
        saved_run(here, name)
    return here


def _pairs(document: dict) -> dict[tuple[str, str, str, str], dict]:  # type: ignore[type-arg]
    return {
        (suite, metric, pair["a"], pair["b"]): pair
        for suite, found in document["suites"].items()
        for metric, matrix in found["metrics"].items()
        for pair in matrix["pairs"]
    }


def test_three_results_give_the_gates_own_p_values_holm_corrected(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = [f"{name}=run-{name}/result.json" for name in ("a", "b", "c")]
    capsys.readouterr()
    assert main(["compare", *results]) == 0
    out = capsys.readouterr().out
    assert "Holm-corrected" in out
    # ranked: a (nothing wrong) above b above c, c apart from both on exact match
    qa = out.split("suite qa · exact_match")[1].split("suite ")[0]
    ranking = [line.split()[:2] for line in qa.splitlines()[2:5]]
    assert ranking == [["1", "a"], ["2", "b"], ["3", "c"]]

    assert main(["compare", *results, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["significance"]["correction"] == "holm"
    pairs = _pairs(document)
    assert len(pairs) == 2 * 2 * 3  # two suites, two metrics each, three pairs
    checked = 0
    for first, second in (("a", "b"), ("a", "c"), ("b", "c")):
        gate = gate_run(three, first, second)  # the gate with `first` blessed
        for (suite, metric), p_value in gate.items():
            pair = pairs[(suite, metric, first, second)]
            assert pair["p_value"] == p_value  # equal, not close: the same bootstrap
            checked += 1
    assert checked == 12
    for suite, found in document["suites"].items():
        for metric, matrix in found["metrics"].items():
            raw = [pair["p_value"] for pair in matrix["pairs"]]
            assert [pair["p_holm"] for pair in matrix["pairs"]] == holm(raw), (suite, metric)
            for pair in matrix["pairs"]:
                assert pair["significant"] == (pair["p_holm"] < 0.05)
    exact = document["suites"]["qa"]["metrics"]["exact_match"]
    assert [row["system"] for row in exact["ranking"]] == ["a", "b", "c"]
    assert [row["group"] for row in exact["ranking"]] == ["a", "a", "b"]
    assert exact["pairs"][1]["better"] == "a"  # c − a: a significantly better
    assert exact["pairs"][1]["examples"][0]["output_b"] == "something else from c"


def test_holm_against_a_hand_computed_example() -> None:
    # sorted: 0.005×4 = 0.02, 0.01×3 = 0.03, 0.03×2 = 0.06, 0.04×1 = 0.04 → kept at 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert holm([0.2]) == [0.2]
    assert holm([]) == []


def test_letter_groups_split_only_significant_pairs() -> None:
    ranked = ["A", "B", "C", "D"]
    different = {frozenset(p) for p in (("A", "C"), ("A", "D"), ("B", "D"))}
    assert letter_groups(ranked, different) == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    assert letter_groups(ranked, set()) == dict.fromkeys(ranked, "a")
    every = {frozenset((x, y)) for x in ranked for y in ranked if x < y}
    assert letter_groups(ranked, every) == {"A": "a", "B": "b", "C": "c", "D": "d"}


def test_configured_systems_and_a_baseline_match_their_results(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate_run(three, "a", "a")  # the baseline blesses a
    capsys.readouterr()
    args = ["compare", "base=goldgate.baseline.json", "b", "c", "--json", "-q"]
    assert main(args) == 0
    configured = json.loads(capsys.readouterr().out)
    assert (
        main(["compare", "run-a/result.json", "run-b/result.json", "run-c/result.json", "--json"])
        == 0
    )
    saved = json.loads(capsys.readouterr().out)
    renamed = {"base": "run-a", "b": "run-b", "c": "run-c"}  # directories label results
    for (suite, metric, a, b), pair in _pairs(configured).items():
        twin = _pairs(saved)[(suite, metric, renamed.get(a, a), renamed.get(b, b))]
        assert (pair["p_value"], pair["delta"]) == (twin["p_value"], twin["delta"])
    assert [s["source"] for s in configured["systems"]] == [
        "goldgate.baseline.json",
        "systems.b",
        "systems.c",
    ]


def test_out_writes_markdown_html_and_json(three: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compare", "run-a/result.json", "run-b/result.json", "--matrix", "--out", "cmp"]
    assert main(args) == 0
    assert "compare.html" in capsys.readouterr().out
    markdown = (three / "cmp" / "compare.md").read_text()
    assert "Holm-corrected" in markdown and "| rank | system |" in markdown
    document = json.loads((three / "cmp" / "compare.json").read_text())
    assert list(document["suites"]) == ["qa", "translate"]
    assert '<table class="heat">' in (three / "cmp" / "compare.html").read_text()


def test_two_plain_files_keep_the_side_by_side_table(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["compare", "run-a/result.json", "run-b/result.json"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("A: run-a/result.json\nB: run-b/result.json\n")
    assert "Holm" not in out


def test_mismatched_golden_sets_and_bad_files_exit_2_naming_the_file(
    three: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    goldens = three / "goldens" / "qa.jsonl"
    lines = goldens.read_text().splitlines(keepends=True)
    goldens.write_text("".join(lines[:-1]))
    other = saved_run(three, "b")  # run-b now holds a smaller qa golden set
    capsys.readouterr()
    assert main(["compare", "run-a/result.json", str(other), "run-c/result.json"]) == 2
    err = capsys.readouterr().err
    assert "run-b/result.json" in err and "golden set" in err

    (three / "broken.json").write_text("{")
    assert main(["compare", "run-a/result.json", "broken.json", "run-c/result.json"]) == 2
    assert "broken.json" in capsys.readouterr().err
    assert main(["compare", "run-a/result.json", "missing.json", "run-c/result.json"]) == 2
    assert "missing.json" in capsys.readouterr().err
    assert main(["compare", "run-a/result.json", "nosuch", "run-c/result.json"]) == 2
    assert "nosuch" in capsys.readouterr().err
    assert main(["compare", "run-a/result.json"]) == 2


def test_ter_ranks_the_lowest_first(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build(here)
    config = here / "goldgate.yaml"
    config.write_text(
        config.read_text().replace("      chrf: {}\n", "      chrf: {}\n      ter: {}\n")
    )
    capsys.readouterr()
    assert main(["compare", "c", "a", "b", "--json", "-q"]) == 0
    ter = json.loads(capsys.readouterr().out)["suites"]["translate"]["metrics"]["ter"]
    assert not ter["higher_is_better"]
    ranking = ter["ranking"]
    assert [row["system"] for row in ranking] == ["a", "b", "c"]
    assert ranking[0]["score"] < ranking[2]["score"]
    c_minus_a = next(p for p in ter["pairs"] if (p["a"], p["b"]) == ("c", "a"))
    assert c_minus_a["delta"] < 0  # a − c: TER fell, a is better
    assert c_minus_a["better"] == ("a" if c_minus_a["significant"] else None)
    assert main(["compare", "c", "a", "b", "-q"]) == 0
    assert "ter (lower is better)" in capsys.readouterr().out


def test_a_regressed_system_is_not_a_gate(three: Path) -> None:
    # c regressed against a by the gate's rules; comparing them is still exit 0
    gate_run(three, "a", "c")
    assert main(["compare", "goldgate.baseline.json", "run-c/result.json", "--matrix"]) == 0


def test_the_systems_key_is_in_the_schema_and_checked(tmp_path: Path) -> None:
    import yaml

    from goldgate.errors import ConfigError
    from goldgate.model.config_loading import parse_config
    from goldgate.model.config_schema import config_json_schema

    systems = config_json_schema()["properties"]["systems"]
    assert "goldgate compare" in systems["description"]
    assert systems["additionalProperties"] == {"$ref": "#/$defs/SystemConfig"}
    base = "version: 1\nsystem: {predictions: p.jsonl}\nsuites:\n  qa:\n    goldens: g.jsonl\n"
    base += "    metrics: {exact_match: {}}\n"

    def parsed(text: str) -> object:
        return parse_config(yaml.safe_load(text), root=tmp_path, source=tmp_path / "g.yaml")

    config = parsed(base + "systems:\n  small: {command: python -m app}\n")
    assert config.systems["small"].kind == "command"  # type: ignore[attr-defined]
    for bad, found in (
        ("systems:\n  'a b': {predictions: x.jsonl}\n", "system name"),
        ("systems:\n  s: {}\n", "set exactly one of predictions"),
    ):
        with pytest.raises(ConfigError, match=found):
            parsed(base + bad)


def test_suite_filter_and_options_known_only_from_the_configuration(
    here: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    build(here)
    config = here / "goldgate.yaml"
    config.write_text(config.read_text().replace("      chrf: {}\n", "      chrf: {beta: 3}\n"))
    for name in ("a", "b", "c"):
        saved_run(here, name)
    results = [f"{name}=run-{name}/result.json" for name in ("a", "b", "c")]
    capsys.readouterr()
    assert main(["compare", *results, "--suite", "translate", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document["suites"]) == ["translate"]
    assert list(document["suites"]["translate"]["metrics"]) == ["bleu", "chrf"]
    assert document["notes"] == []
    assert main(["compare", *results, "--suite", "nope"]) == 2
    assert "nope" in capsys.readouterr().err

    # elsewhere, without the configuration, chrf's beta is unknown: left out, and said so
    elsewhere = here / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    moved = [f"{name}=../run-{name}/result.json" for name in ("a", "b", "c")]
    assert main(["compare", *moved, "--suite", "translate", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document["suites"]["translate"]["metrics"]) == ["bleu"]
    assert any("'chrf'" in note and "-c" in note for note in document["notes"])
    assert main(["compare", *moved, "--suite", "translate", "-c", "../goldgate.yaml"]) == 0
    assert "chrf" in capsys.readouterr().out


def test_a_sampled_system_is_compared_by_the_two_level_bootstrap(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build(here)
    for suite in ("qa", "translate"):
        first = (here / f"pred_a_{suite}.jsonl").read_text().splitlines()
        second = (here / f"pred_c_{suite}.jsonl").read_text().splitlines()
        rows = [
            {
                "id": json.loads(x)["id"],
                "outputs": [json.loads(x)["output"], json.loads(y)["output"]],
            }
            for x, y in zip(first, second, strict=True)
        ]
        (here / f"pred_ac_{suite}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = here / "goldgate.yaml"
    config.write_text(
        config.read_text() + "  ac: {predictions: 'pred_ac_{suite}.jsonl', samples: 2}\n"
    )
    capsys.readouterr()
    assert main(["compare", "a", "ac", "c", "--suite", "qa", "--json", "-q"]) == 0
    exact = json.loads(capsys.readouterr().out)["suites"]["qa"]["metrics"]["exact_match"]
    scores = {row["system"]: row["score"] for row in exact["ranking"]}
    assert scores["ac"] == pytest.approx((scores["a"] + scores["c"]) / 2)
    assert [row["system"] for row in exact["ranking"]] == ["a", "ac", "c"]
    assert all(0 < pair["p_value"] <= 1 for pair in exact["pairs"])


def test_a_systems_interval_is_the_percentile_of_its_resampled_scores() -> None:
    # differential: the resamples drawn by hand with the gate's resample_counts
    import numpy as np

    from goldgate.gate.many import Settings, score_interval
    from goldgate.gate.stats import percentile_interval, resample_counts
    from goldgate.metrics.engine import score_corpus
    from goldgate.metrics.registry import create_metric

    metric = create_metric("bleu", {})
    rng = np.random.default_rng(7)
    words = ["a", "b", "c", "d", "e"]
    candidates = [" ".join(rng.choice(words, 6)) for _ in range(40)]
    references = [[" ".join(rng.choice(words, 6))] for _ in range(40)]
    rows = score_corpus([("bleu", metric)], candidates, references)[0].stats
    stats = np.asarray(rows, dtype=np.float64)[np.newaxis]
    settings = Settings(resamples=200, alpha=0.1, seed=3)
    by_hand = np.concatenate(
        [
            [metric.score_stats(list(total)) for total in counts @ stats[0]]
            for counts in resample_counts(40, resamples=200, seed=3)
        ]
    )
    assert score_interval(metric, stats, settings) == percentile_interval(by_hand, 0.1)
