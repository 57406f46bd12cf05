from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.errors import ConfigError
from goldgate.model.examples_file import EXAMPLES_FILE
from goldgate.model.result import RunResult
from goldgate.report import FILENAMES, FORMATS, render, write_reports
from tests.report.fixtures import make_result


def test_writes_each_format(tmp_path: Path) -> None:
    result = make_result("regressed")
    paths = write_reports(result, tmp_path / "out", FORMATS)
    names = [FILENAMES[f] for f in FORMATS]
    names.insert(names.index("result.json") + 1, EXAMPLES_FILE)
    assert [p.name for p in paths] == names
    for fmt in ("md", "html", "junit", "text", "metrics"):
        assert (tmp_path / "out" / FILENAMES[fmt]).read_text(encoding="utf-8") == render(
            result, fmt
        )
    assert RunResult.from_json_file(tmp_path / "out" / "result.json") == result
    assert sorted(os.listdir(tmp_path / "out")) == sorted(p.name for p in paths)


def test_result_json_is_compact_and_its_examples_sit_beside_it(tmp_path: Path) -> None:
    result = make_result("regressed", n_examples=300)
    write_reports(result, tmp_path, ["json"])
    saved = json.loads((tmp_path / "result.json").read_text(encoding="utf-8"))
    assert saved["schema_version"] == "goldgate.result/2"
    assert saved["examples_file"] == EXAMPLES_FILE
    assert all(suite["examples"] == [] for suite in saved["suites"])
    # Aggregates stay in result.json, complete.
    assert [len(s["checks"]) for s in saved["suites"]] == [len(s.checks) for s in result.suites]
    rows = gzip.decompress((tmp_path / EXAMPLES_FILE).read_bytes()).decode().splitlines()
    assert len(rows) == 900
    assert json.loads(rows[0])["suite"] == "qa" and json.loads(rows[0])["id"] == "qa-000"
    inline = len(result.to_json())
    assert (tmp_path / "result.json").stat().st_size < inline / 20
    assert (tmp_path / EXAMPLES_FILE).stat().st_size < inline / 5
    # The same result gives the same bytes (no timestamp in the gzip header).
    first = (tmp_path / EXAMPLES_FILE).read_bytes()
    write_reports(result, tmp_path, ["json"])
    assert (tmp_path / EXAMPLES_FILE).read_bytes() == first
    assert RunResult.from_json_file(tmp_path / "result.json") == result


def test_a_missing_or_damaged_examples_file_is_an_input_error(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    write_reports(make_result("regressed"), tmp_path, ["json"])
    side = tmp_path / EXAMPLES_FILE
    side.write_bytes(gzip.compress(b'{"suite": "qa", "id": 3}\n', mtime=0))
    assert main(["report", str(tmp_path / "result.json")]) == 2
    assert f"{EXAMPLES_FILE}:1: not an example row" in capfd.readouterr().err
    side.write_bytes(b"not gzip")
    assert main(["report", str(tmp_path / "result.json")]) == 2
    assert EXAMPLES_FILE in capfd.readouterr().err
    side.unlink()
    assert main(["report", str(tmp_path / "result.json")]) == 2
    assert f"{EXAMPLES_FILE}: cannot read the examples" in capfd.readouterr().err


def test_report_command_rerenders_from_result_json_and_its_examples(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    result = make_result("regressed")
    write_reports(result, tmp_path, ["json"])
    for fmt in ("md", "html"):
        assert main(["report", str(tmp_path / "result.json"), "--format", fmt]) == 0
        assert capfd.readouterr().out == render(result, fmt)


def test_unknown_format_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="did you mean 'html'"):
        write_reports(make_result("pass"), tmp_path, ["md", "htm"])
    assert os.listdir(tmp_path) == []


def test_failed_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "report.md").write_text("previous", encoding="utf-8")

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError):
        write_reports(make_result("pass"), tmp_path, ["md"])
    assert os.listdir(tmp_path) == ["report.md"]
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == "previous"


def test_json_is_the_versioned_result() -> None:
    text = render(make_result("pass"), "json")
    assert '"schema_version": "goldgate.result/2"' in text
    assert RunResult.model_validate_json(text) == make_result("pass")


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_command_rerenders_a_saved_result(
    fmt: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    result = make_result("regressed")
    saved = tmp_path / "result.json"
    saved.write_text(result.to_json(), encoding="utf-8")
    assert main(["report", str(saved), "--format", fmt]) == 0
    assert capfd.readouterr().out == render(result, fmt)
    out = tmp_path / f"again.{fmt}"
    assert main(["report", str(saved), "--format", fmt, "--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == render(result, fmt)


def test_report_command_errors(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capfd.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text('{"verdict": "pass"}', encoding="utf-8")
    assert main(["report", str(bad)]) == 2
    assert "not a goldgate result" in capfd.readouterr().err
    good = tmp_path / "good.json"
    good.write_text(make_result("pass").to_json(), encoding="utf-8")
    assert main(["report", str(good), "-o", str(tmp_path / "no" / "such" / "dir.md")]) == 2
    assert "does not exist" in capfd.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["report", str(good), "--format", "pdf"])
    assert exc.value.code == 2


def test_jinja2_is_imported_only_under_report() -> None:
    src = Path(__file__).resolve().parents[2] / "src" / "goldgate"
    for path in src.rglob("*.py"):
        if "report" in path.relative_to(src).parts[:1]:
            continue
        text = path.read_text(encoding="utf-8")
        assert "import jinja2" not in text and "from jinja2" not in text, path


def _edge_results() -> dict[str, RunResult]:
    first = make_result("pass", baseline=False).model_copy(update={"significance": None})
    empty = make_result("error").model_copy(
        update={"suites": [], "errors": ["goldgate.yaml: no suites configured"]}
    )
    return {"first-run": first, "empty": empty}


@pytest.mark.parametrize("name", ["first-run", "empty"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_edge_results_render(name: str, fmt: str) -> None:
    result = _edge_results()[name]
    text = render(result, fmt)
    assert text.endswith("\n") or fmt == "html"
    if fmt == "md" and name == "first-run":
        assert "not found" in text and "significance off" in text
        assert "Worst regressed" not in text
    if fmt == "md" and name == "empty":
        assert "no suites configured" in text


def test_json_matches_the_published_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    import json

    schema = RunResult.model_json_schema()
    for result in [make_result("regressed"), *_edge_results().values()]:
        jsonschema.validate(json.loads(render(result, "json")), schema)


def test_rendering_does_not_depend_on_hash_seeds(tmp_path: Path) -> None:
    import hashlib
    import subprocess
    import sys

    code = (
        "import hashlib, sys; from goldgate.report import render; "
        "from tests.report.fixtures import hostile_result; r = hostile_result(); "
        "print(hashlib.sha256(''.join(render(r, f) for f in "
        "('md', 'html', 'junit', 'json')).encode()).hexdigest())"
    )
    root = Path(__file__).resolve().parents[2]
    digests = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(out.stdout.strip())
    from tests.report.fixtures import hostile_result

    here = "".join(render(hostile_result(), f) for f in ("md", "html", "junit", "json"))
    digests.add(hashlib.sha256(here.encode()).hexdigest())
    assert len(digests) == 1
