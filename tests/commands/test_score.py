"""``goldgate score``: JSONL and text-file input, JSON and table output, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import sacrebleu
from rouge_score import rouge_scorer

from goldgate.cli.main import main
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import metric_from_spec
from tests.shared_data import DATA

ROWS: list[dict[str, Any]] = [
    {"candidate": "Paris", "references": ["paris", "Paris, France"]},
    {"candidate": "the Treaty of Versailles", "references": ["Treaty of Versailles"]},
    {"candidate": "in 1990", "references": ["1990", "the year 1990", "1991"]},
    {"candidate": "blue whale", "references": ["a whale"]},
]
SPECS = ["exact_match", "token_f1", "length_ratio", "exact_match:normalizer=strict"]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def run_score(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["score", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def metric_args(specs: list[str]) -> list[str]:
    return [arg for spec in specs for arg in ("--metric", spec)]


def expected(specs: list[str], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """What the library says, metric by metric, for the same rows."""
    out = {}
    for spec in specs:
        (result,) = score_corpus(
            [(spec, metric_from_spec(spec))],
            [row["candidate"] for row in rows],
            [row["references"] for row in rows],
        )
        score = result.corpus_score()
        out[spec] = {
            "score": score.score,
            "signature": score.signature,
            "components": score.components,
            "per_example": result.per_example(),
        }
    return out


# --- happy paths ------------------------------------------------------------------------------
def test_jsonl_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    code, out, err = run_score(capsys, str(data), *metric_args(SPECS), "--json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    want = expected(SPECS, ROWS)
    assert list(document["metrics"]) == SPECS  # keyed by the spec as typed, in order
    for spec in SPECS:
        entry = document["metrics"][spec]
        assert set(entry) == {"score", "signature", "components", "higher_is_better"}
        assert entry["higher_is_better"] is True
        assert entry["score"] == want[spec]["score"]
        assert entry["signature"] == want[spec]["signature"]
        assert entry["components"] == want[spec]["components"]
    em = document["metrics"]["exact_match"]
    assert em["score"] == 50.0
    assert em["signature"] == "nrefs:var|norm:squad.v1|version:0.1.0"
    assert em["components"] == {"correct": 2, "count": 4}
    assert document["metrics"]["exact_match:normalizer=strict"]["score"] == 0.0


def test_per_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    code, out, _ = run_score(capsys, str(data), *metric_args(SPECS), "--per-example", "--json")
    assert code == 0
    document = json.loads(out)
    want = expected(SPECS, ROWS)
    for spec in SPECS:
        assert document["metrics"][spec]["per_example"] == want[spec]["per_example"]
    assert document["metrics"]["exact_match"]["per_example"] == [100.0, 100.0, 0.0, 0.0]


def test_text_files_equal_jsonl(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two reference files give every line two references, exactly as the JSONL rows would."""
    hyps = ["Paris", "the Treaty of Versailles", "in 1990"]
    refs1 = ["paris", "Treaty of Versailles", "1990"]
    refs2 = ["Paris, France", "Versailles", "the year 1990"]
    for name, lines in (("hyp.txt", hyps), ("ref1.txt", refs1), ("ref2.txt", refs2)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["--hyps", str(tmp_path / "hyp.txt"), "--refs", str(tmp_path / "ref1.txt")]
    args += ["--refs", str(tmp_path / "ref2.txt"), *metric_args(SPECS), "--json"]
    code, out, _ = run_score(capsys, *args)
    assert code == 0
    rows = [
        {"candidate": h, "references": [a, b]} for h, a, b in zip(hyps, refs1, refs2, strict=True)
    ]
    want = expected(SPECS, rows)
    got = json.loads(out)["metrics"]
    for spec in SPECS:
        assert got[spec]["score"] == want[spec]["score"]
        assert got[spec]["signature"] == want[spec]["signature"]
    assert got["exact_match"]["signature"].startswith("nrefs:2|")


def test_text_files_crlf_and_no_final_newline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "hyp.txt").write_bytes(b"a b\r\nc")
    (tmp_path / "ref.txt").write_bytes(b"a b\r\nc")
    args = ["--hyps", str(tmp_path / "hyp.txt"), "--refs", str(tmp_path / "ref.txt")]
    code, out, _ = run_score(capsys, *args, "--metric", "exact_match:normalizer=lower", "--json")
    assert code == 0
    entry = json.loads(out)["metrics"]["exact_match:normalizer=lower"]
    assert entry["components"] == {"correct": 2, "count": 2}


def test_reference_string_and_blank_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(
        '{"candidate": "a", "reference": "a"}\n\n{"candidate": "b", "references": ["c"]}\n',
        encoding="utf-8",
    )
    code, out, _ = run_score(capsys, str(data), "--metric", "exact_match", "--json")
    assert code == 0
    assert json.loads(out)["metrics"]["exact_match"]["components"] == {"correct": 1, "count": 2}


def test_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    code, out, _ = run_score(capsys, str(data), "--metric", "exact_match", "--metric", "token_f1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["metric", "score", "signature"]
    assert lines[1].split() == ["exact_match", "50.00", "nrefs:var|norm:squad.v1|version:0.1.0"]
    assert lines[2].split()[0] == "token_f1"
    # Aligned: every signature starts in the same column.
    assert len({line.index("nrefs") for line in lines[1:]}) == 1


def test_table_per_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    code, out, _ = run_score(capsys, str(data), "--metric", "exact_match", "--per-example")
    assert code == 0
    tail = out.split("\n\n")[1].splitlines()
    assert tail[0].split() == ["example", "exact_match"]
    assert [line.split() for line in tail[1:]] == [
        ["1", "100.00"],
        ["2", "100.00"],
        ["3", "0.00"],
        ["4", "0.00"],
    ]


def test_repeated_spec_scored_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    code, out, _ = run_score(capsys, str(data), *metric_args(["token_f1", "token_f1"]), "--json")
    assert code == 0
    assert list(json.loads(out)["metrics"]) == ["token_f1"]


def test_json_keeps_non_ascii(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", [{"candidate": "x", "references": ["y"]}])
    spec = "token_f1:normalizer=lower+nfkc"
    code, out, _ = run_score(capsys, str(data), "--metric", spec, "--json")
    assert code == 0
    assert json.loads(out)["metrics"][spec]["signature"] == (
        "nrefs:1|norm:custom.v1[lower+nfkc]|version:0.1.0"
    )


# --- errors: one line, the file and line named, exit 2 ------------------------------------------
BAD_ROWS = [
    ('{"candidate": "a", "references": ["a"]}\n{"candidate": "b", "references": ["b"\n', 2,
     "malformed JSON"),
    ('{"candidate": "a"}\n', 1, "missing 'references'"),
    ('{"candidate": "a", "references": []}\n', 1, "'references' is empty"),
    ('{"candidate": "a", "references": "a"}\n', 1, "'references' must be a list of strings"),
    ('{"candidate": "a", "references": ["a", 3]}\n', 1, "reference 2 is int, not a string"),
    ('{"candidate": 7, "references": ["a"]}\n', 1, "'candidate' is int, not a string"),
    ('{"candidate": null, "references": ["a"]}\n', 1, "'candidate' is null, not a string"),
    ('{"references": ["a"]}\n', 1, "missing 'candidate'"),
    ('\n\n["a", "b"]\n', 3, "expected a JSON object, got list"),
]  # fmt: skip


@pytest.mark.parametrize(("content", "line", "message"), BAD_ROWS)
def test_bad_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, line: int, message: str
) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(content, encoding="utf-8")
    code, out, err = run_score(capsys, str(data), "--metric", "exact_match")
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"goldgate: error: {data}:{line}: ")
    assert message in err


def test_bad_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.jsonl"
    data.write_bytes(b'{"candidate": "a", "references": ["a"]}\n{"candidate": "\xff"}\n')
    code, _, err = run_score(capsys, str(data), "--metric", "exact_match")
    assert code == 2
    assert err == f"goldgate: error: {data}:2: invalid UTF-8 (byte 0xff at column 16)\n"


def test_bad_utf8_in_text_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "hyp.txt").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_bytes(b"a\nb\xc3\n")
    args = ["--hyps", str(tmp_path / "hyp.txt"), "--refs", str(tmp_path / "ref.txt")]
    code, _, err = run_score(capsys, *args, "--metric", "exact_match")
    assert code == 2
    assert err.startswith(f"goldgate: error: --refs {tmp_path / 'ref.txt'}:2: invalid UTF-8")


def test_empty_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("\n", encoding="utf-8")
    code, _, err = run_score(capsys, str(data), "--metric", "exact_match")
    assert (code, err) == (2, f"goldgate: error: {data}: no rows to score\n")


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.jsonl"
    code, _, err = run_score(capsys, str(missing), "--metric", "exact_match")
    assert (code, err) == (2, f"goldgate: error: {missing}: no such file\n")
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("a\n", encoding="utf-8")
    code, _, err = run_score(capsys, "--hyps", str(hyp), "--refs", str(missing), "--metric", "bleu")
    assert (code, err) == (2, f"goldgate: error: --refs {missing}: no such file\n")


def test_mismatched_line_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hyp, ref1, ref2 = tmp_path / "hyp.txt", tmp_path / "ref1.txt", tmp_path / "ref2.txt"
    hyp.write_text("a\nb\nc\n", encoding="utf-8")
    ref1.write_text("a\nb\nc\n", encoding="utf-8")
    ref2.write_text("a\nb\n", encoding="utf-8")
    args = ["--hyps", str(hyp), "--refs", str(ref1), "--refs", str(ref2)]
    code, _, err = run_score(capsys, *args, "--metric", "exact_match")
    assert code == 2
    assert err == (
        f"goldgate: error: --hyps {hyp} has 3 lines but --refs {ref2} has 2: "
        "the files must be line-aligned\n"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("exact_macth", "--metric exact_macth: unknown metric 'exact_macth' (did you mean "
         "'exact_match'?)"),
        ("token_f1:normaliser=squad", "unknown option 'normaliser' for metric 'token_f1' (did "
         "you mean 'normalizer'?)"),
        ("exact_match:normalizer=sqaud", "unknown normalizer 'sqaud' (did you mean 'squad'?)"),
        ("length_ratio:ref_length=mean", "bad value for option 'ref_length'"),
        ("exact_match:normalizer=squad,=x", "expected key=value"),
        ("exact_match:normalizer=", "unknown normalizer ''"),
    ],
)  # fmt: skip
def test_bad_metric(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, message: str
) -> None:
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    code, out, err = run_score(capsys, str(data), "--metric", spec)
    assert (code, out) == (2, "")
    assert err.startswith("goldgate: error: ")
    assert err.count("\n") == 1
    assert message in err


def test_bad_metric_reported_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typo in --metric is reported at once, not after a large file has been parsed."""
    code, _, err = run_score(capsys, str(tmp_path / "missing.jsonl"), "--metric", "exact_macth")
    assert code == 2
    assert "unknown metric 'exact_macth'" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--metric", "exact_match"], "nothing to score"),
        (["d.jsonl", "--hyps", "h.txt", "--refs", "r.txt", "--metric", "bleu"], "not both"),
        (["--hyps", "h.txt", "--metric", "bleu"], "nothing to score"),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, _, err = run_score(capsys, *argv)
    assert code == 2
    assert message in err


def test_metric_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["score", "data.jsonl"])
    assert exc.value.code == 2
    assert "--metric" in capsys.readouterr().err


# --- the installed command --------------------------------------------------------------------
def test_console_script_end_to_end(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "goldgate"
    if not script.exists():
        pytest.skip("the goldgate console script is not installed beside this Python")
    data = write_jsonl(tmp_path / "data.jsonl", ROWS)
    done = subprocess.run(
        [str(script), "score", str(data), *metric_args(SPECS), "--per-example", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    got = json.loads(done.stdout)["metrics"]
    want = expected(SPECS, ROWS)
    for spec in SPECS:
        assert got[spec]["score"] == want[spec]["score"]
        assert got[spec]["per_example"] == want[spec]["per_example"]
    bad = subprocess.run(
        [str(script), "score", str(tmp_path / "none.jsonl"), "--metric", "exact_match"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr == f"goldgate: error: {tmp_path / 'none.jsonl'}: no such file\n"


# --- with the other metric families -----------------------------------------------------------
def test_bleu_and_rouge_through_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One call scores BLEU and ROUGE-L beside exact match; numbers equal the peers'."""

    rows = [
        {"candidate": "the cat sat on the mat", "references": ["the cat sat on a mat", "a cat"]},
        {"candidate": "dogs run fast today", "references": ["the dogs are running fast", "x y"]},
        {"candidate": "hello world", "references": ["hello there world", "hi world"]},
    ]
    data = write_jsonl(tmp_path / "data.jsonl", rows)
    specs = ["bleu", "rougeL:use_stemmer=true", "exact_match"]
    code, out, err = run_score(capsys, str(data), *metric_args(specs), "--per-example", "--json")
    assert (code, err) == (0, "")
    got = json.loads(out)["metrics"]
    hyps = [row["candidate"] for row in rows]
    streams = [[row["references"][i] for row in rows] for i in range(2)]
    bleu = sacrebleu.corpus_bleu(hyps, streams)
    assert got["bleu"]["score"] == pytest.approx(bleu.score, abs=1e-9)
    assert got["bleu"]["signature"].startswith("nrefs:2|")
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    per_example = [
        100 * scorer.score_multi(row["references"], row["candidate"])["rougeL"].fmeasure
        for row in rows
    ]
    assert got["rougeL:use_stemmer=true"]["per_example"] == pytest.approx(per_example, abs=1e-9)
    assert got["rougeL:use_stemmer=true"]["score"] == pytest.approx(
        sum(per_example) / len(per_example), abs=1e-9
    )


def test_real_squad_file_through_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "qa_squad_v1.1_dev.bert-ensemble.jsonl"
    if not path.exists():
        pytest.skip(f"{path} not present (shared data is optional)")
    code, out, _ = run_score(capsys, str(path), *metric_args(["exact_match", "token_f1"]), "--json")
    assert code == 0
    got = json.loads(out)["metrics"]
    assert round(got["exact_match"]["score"], 2) == 86.21
    assert round(got["token_f1"]["score"], 2) == 92.20


def test_a_module_function_metric_imports_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As a configuration's ``module:function`` metrics import from its folder.
    (tmp_path / "score_cwd_plugin.py").write_text(
        "def first_letter(candidate, references):\n"
        "    return float(any(candidate[:1] == r[:1] for r in references))\n"
    )
    data = write_jsonl(tmp_path / "rows.jsonl", ROWS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        code, out, err = run_score(
            capsys, str(data), "--metric", "score_cwd_plugin:first_letter", "--json"
        )
    finally:
        sys.modules.pop("score_cwd_plugin", None)
    assert code == 0, err
    assert json.loads(out)["metrics"]["score_cwd_plugin:first_letter"]["score"] == 0.25
