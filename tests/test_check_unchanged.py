"""``check`` of a golden set file that has the blessed bytes: the records are not read.

The baseline keeps the SHA-256 of the golden set file's bytes as blessed; for a packed suite
whose file still has them, ``check`` verifies the metrics' signatures and the blessed scores
and takes the records for the blessed ones. Anything else (another byte, an unpacked suite,
a baseline without the hash) reads the records as before, with the same findings.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main
from goldgate.errors import BaselineError
from goldgate.model import baseline as baseline_module
from goldgate.model import goldens as goldens_module
from goldgate.model.baseline import blessed_nrefs
from goldgate.model.baseline_io import read_baseline
from goldgate.model.config import Config
from goldgate.model.config_loading import load_config
from goldgate.pipeline import verify
from goldgate.pipeline.verify import SuiteCheck
from goldgate.runner import bless, check
from tests.test_scale import make_project


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, packed: bool) -> Config:
    make_project(tmp_path, 60, seed=21)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", 10 if packed else 10_000)
    config = load_config(tmp_path / "goldgate.yaml")
    bless(config)
    return config


def _unread(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every golden set read from now on, by suite."""
    read: list[str] = []
    real = verify.load_suite_goldens

    def counting(config: Config, name: str) -> object:
        read.append(name)
        return real(config, name)

    monkeypatch.setattr(verify, "load_suite_goldens", counting)
    return read


def _slow(config: Config, monkeypatch: pytest.MonkeyPatch) -> list[SuiteCheck]:
    """``check`` with the fast path turned off: what reading the records finds."""
    with monkeypatch.context() as patched:
        patched.setattr(verify, "_check_by_index", lambda *args: None)
        return check(config)


def test_the_baseline_keeps_the_golden_files_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch, packed=True)
    text = config.baseline.read_text()
    blessed = read_baseline(config.baseline).suites["gen"]
    data = (tmp_path / "goldens" / "gen.jsonl").read_bytes()
    assert blessed.golden_file_hash == "sha256:" + hashlib.sha256(data).hexdigest()
    assert blessed_nrefs(blessed) == "var"  # 1 to 3 references per example
    assert json.loads(text)["suites"]["gen"]["golden_file_hash"] == blessed.golden_file_hash


def test_an_unchanged_file_is_checked_without_reading_its_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch, packed=True)
    slow = _slow(config, monkeypatch)
    read = _unread(monkeypatch)
    fast = check(config)
    assert read == []
    assert fast == slow
    assert fast[0].error is None and fast[0].in_baseline and fast[0].n_examples == 60

    # a metric's settings changed: the same refusal either way, records read or not
    text = (tmp_path / "goldgate.yaml").read_text()
    (tmp_path / "goldgate.yaml").write_text(text.replace("bleu: {}", "bleu: {lowercase: true}"))
    changed = load_config(tmp_path / "goldgate.yaml")
    fast = check(changed)
    assert read == []
    assert fast == _slow(changed, monkeypatch)
    read.clear()
    assert fast[0].error is not None and "metric 'bleu': the signature differs" in fast[0].error

    # a damaged blessed score is refused without the records too
    (tmp_path / "goldgate.yaml").write_text(text)
    document = json.loads(config.baseline.read_text())
    document["suites"]["gen"]["metrics"]["chrf"]["score"] += 1.0
    config.baseline.write_text(json.dumps(document))
    fast = check(config)
    assert read == []
    assert fast == _slow(config, monkeypatch)
    assert fast[0].error is not None and "chrf" in fast[0].error


def test_any_other_byte_reads_the_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = _project(tmp_path, monkeypatch, packed=True)
    goldens = tmp_path / "goldens" / "gen.jsonl"
    read = _unread(monkeypatch)
    # the same records written otherwise: found to be the blessed set by the file's index
    # (tests/test_golden_file_index.py), and by reading the records without it
    goldens.write_text(goldens.read_text().replace('", "', '","'))
    found = check(config)
    assert read == []
    with monkeypatch.context() as patched:
        patched.setattr(verify, "compare_records", lambda *args: None)
        assert check(config) == found
    assert read == ["gen"]
    assert found[0].error is None and found[0].note is None and found[0].n_examples == 60
    # an edited reference: the change described as always, from the region of the file that
    # changed (here the whole file, one piece of the index) and the blessed digests
    rows = [json.loads(line) for line in goldens.read_text().splitlines()]
    rows[4]["references"] = ["something else"]
    goldens.write_text("".join(json.dumps(row) + "\n" for row in rows))
    found = check(config)
    assert read == ["gen"]
    assert found[0].note is not None and "1 edited" in found[0].note
    assert found[0].golden_hash is None  # the new set's content hash is not computed
    assert [replace(one, golden_hash=None) for one in _slow(config, monkeypatch)] == found
    assert read == ["gen", "gen"]
    # a golden set that is gone is the error reading it is
    goldens.unlink()
    found = check(config)
    assert found[0].error is not None and "golden set not found" in found[0].error


def test_unpacked_suites_and_older_baselines_read_the_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch, packed=False)
    assert read_baseline(config.baseline).suites["gen"].golden_file_hash is not None
    read = _unread(monkeypatch)
    assert check(config)[0].error is None
    assert read == ["gen"]  # an unpacked suite is small: its digests are checked on records

    monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", 10)
    bless(config)
    document = json.loads(config.baseline.read_text())
    del document["suites"]["gen"]["golden_file_hash"]  # a baseline from before the field
    del document["suites"]["gen"]["binding"]  # (which came later)
    config.baseline.write_text(json.dumps(document))
    read.clear()
    assert check(config)[0].error is None
    assert read == ["gen"]


def test_a_malformed_file_hash_is_a_damaged_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path, monkeypatch, packed=True)
    document = json.loads(config.baseline.read_text())
    document["suites"]["gen"]["golden_file_hash"] = "md5:abc"
    config.baseline.write_text(json.dumps(document))
    with pytest.raises(BaselineError, match=r"damaged baseline: suites\.gen\.golden_file_hash"):
        check(config)


def test_a_yaml_golden_set_has_its_file_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "set.yaml"
    path.write_text("- id: a\n  input: x\n  references: [y]\n")
    golden = goldens_module.load_goldens(path, "s")
    monkeypatch.setattr(goldens_module, "_HASH_BLOCK", 7)  # hashed in many blocks, same hash
    assert golden.file_hash() == goldens_module.golden_file_hash(path)
    assert golden.file_hash() == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("packed", [False, True])
def test_check_describes_a_change_as_the_run_does(
    packed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check`` counts what changed without the old scores; the counts are the run's."""
    from goldgate.gate.golden_change import change_since, describe, describe_against
    from goldgate.pipeline.plan import load_suite_goldens
    from goldgate.pipeline.score import create_suite_metrics

    config = _project(tmp_path, monkeypatch, packed=packed)
    goldens = tmp_path / "goldens" / "gen.jsonl"
    rows = [json.loads(line) for line in goldens.read_text().splitlines()]
    rows[4]["references"] = ["something else"]
    del rows[9]
    rows += [{"id": "new1", "input": "q", "references": ["a"]}, {**rows[0], "id": "new2"}]
    goldens.write_text("".join(json.dumps(row) + "\n" for row in rows))
    blessed = read_baseline(config.baseline).suites["gen"]
    golden = load_suite_goldens(config, "gen")
    signatures = {spec: blessed.metrics[spec].signature for spec in blessed.metrics}
    common = {"digests": golden.digests(), "signatures": signatures, "suite": "gen", "source": "b"}
    metrics = create_suite_metrics(config, "gen")
    change = change_since(blessed, metrics=metrics, **common)  # type: ignore[arg-type]
    counted = describe_against(blessed, **common)  # type: ignore[arg-type]
    assert counted == describe(change)
    assert "2 added, 1 edited, 1 removed" in counted and "58 shared" in counted
    assert check(config)[0].note == counted


def _repacked_outputs(document: dict[str, Any], outputs: list[list[str]]) -> None:
    """The suite's outputs block replaced by ``outputs`` under a right sha256, as a hand edit
    of a baseline from before the binding digest (so nothing else disagrees with it)."""
    from goldgate.model.packed import pack_json

    suite = document["suites"]["gen"]
    sha256, data = pack_json(outputs)
    suite["packed"]["outputs"] = {"sha256": sha256, "data": data}
    suite.pop("binding", None)


@pytest.mark.parametrize("wrong", ["examples", "samples"])
def test_an_outputs_block_of_the_wrong_shape_is_damage_in_check_as_in_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    wrong: str,
) -> None:
    config = _project(tmp_path, monkeypatch, packed=True)
    document = json.loads(config.baseline.read_text())
    outputs = [["a", "b"]] * 60
    # one example too few, or one sample per example where the suite blessed two
    _repacked_outputs(document, outputs[:59] if wrong == "examples" else [["a"]] * 60)
    config.baseline.write_text(json.dumps(document))
    expected = "outputs: expected a list of 60 lists of 2 outputs"
    capsys.readouterr()
    assert main(["check"]) == 2  # was 0: check never decoded the outputs block
    err = capsys.readouterr().err
    assert f"goldgate.baseline.json: damaged baseline: suite 'gen': {expected}" in err
    assert main(["run"]) == 2  # the reports decode it (with one sample: was exit 0)
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize("binding", ["first", "second", "none"])
def test_a_baseline_merged_hunk_by_hunk_from_two_blesses_is_refused_by_check(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    binding: str,
) -> None:
    """The first bless's golden hash, file hash and index with the second's packed examples
    (and scores, which follow from them): ``check`` took the unchanged file for the blessed
    set and never looked at the examples (exit 0), where ``run`` refused them (exit 2)."""
    config = _project(tmp_path, monkeypatch, packed=True)
    goldens = tmp_path / "goldens" / "gen.jsonl"
    first_bytes = goldens.read_bytes()
    first = json.loads(config.baseline.read_text())["suites"]["gen"]
    rows = [json.loads(line) for line in goldens.read_text().splitlines()]
    rows[4]["references"] = ["something else"]
    goldens.write_text("".join(json.dumps(row) + "\n" for row in rows))
    bless(config)
    document = json.loads(config.baseline.read_text())
    second = document["suites"]["gen"]
    merged = {**first, "packed": second["packed"], "metrics": second["metrics"]}
    if binding == "second":
        merged["binding"] = second["binding"]
    elif binding == "none":  # a baseline from before the binding: the records are read
        merged.pop("binding", None)
    document["suites"]["gen"] = merged
    config.baseline.write_text(json.dumps(document))
    goldens.write_bytes(first_bytes)
    capsys.readouterr()
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    if binding == "none":
        assert "its golden hash matches the golden set but its examples do not" in err
    else:
        assert "suite 'gen': its golden hash, golden set file hash and index" in err
        assert "do not come from one bless" in err
    assert main(["run"]) == 2
