"""The compact (packed) baseline of large suites: exact round trips, refusal when damaged."""

from __future__ import annotations

import base64
import json
import resource
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldgate.errors import BaselineError
from goldgate.model import baseline as baseline_module
from goldgate.model.baseline import Baseline, BaselineMetric, SuiteBaseline
from goldgate.model.baseline_io import dumps_baseline, read_baseline, write_baseline
from goldgate.model.compact_stats import as_float
from goldgate.model.config_loading import load_config
from goldgate.model.golden_hashing import record_digest
from goldgate.model.packed import (
    PackError,
    pack_bytes,
    pack_columns,
    pack_json,
    unpack_bytes,
    unpack_columns,
)
from goldgate.runner import bless, run
from tests.test_scale import make_project


def _suite(n: int = 50, samples: int = 2, packed: bool = True) -> SuiteBaseline:
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 300, size=(samples, n, 3)).astype(np.float64)
    counts[0, 0, 2] = 70_000.0  # a column that needs 4 bytes
    fractions = rng.random(size=(samples, n, 2))
    fractions[0, 1, 0] = -0.0
    ids = [f"id-{i}" if i % 7 else f'ünï {i}\n"x"' for i in range(n)]
    return SuiteBaseline.build(
        golden_hash="sha256:abc",
        goldens="goldens/big.jsonl",
        samples=samples,
        metrics={
            "counts": BaselineMetric(signature="a", score=1.5, stat_names=["x", "y", "z"]),
            "fractions": BaselineMetric(signature="b", score=2.5, stat_names=["p", "q"]),
        },
        ids=ids,
        digests=[record_digest(i, [i], []) for i in ids],
        outputs=[[f"out {i} ü", f"out {i} \u0000 two"][:samples] for i in ids],
        stats={"counts": counts, "fractions": fractions},
        packed=packed,
    )


def _write(tmp_path: Path, suite: SuiteBaseline) -> Path:
    path = tmp_path / "goldgate.baseline.json"
    write_baseline(path, Baseline(goldgate_version="0.1.0", suites={"big": suite}))
    return path


def test_packed_round_trip_is_exact_and_stable(tmp_path: Path) -> None:
    plain = _suite(packed=False)
    packed = _suite(packed=True)
    path = _write(tmp_path, packed)
    first = path.read_bytes()
    document = json.loads(first)
    assert document["schema_version"] == "goldgate.baseline/2"
    suite_json = document["suites"]["big"]
    assert "examples" not in suite_json
    # the readable part stays readable
    assert suite_json["metrics"]["counts"]["score"] == 1.5
    # integers where integers: 2 bytes for counts up to 299, 4 for 70,000; fractions f8
    assert suite_json["packed"]["stats"]["counts"]["columns"] == ["u2", "u2", "u4"] + ["u2"] * 3
    assert suite_json["packed"]["stats"]["fractions"]["columns"] == ["f8"] * 4
    read = read_baseline(path).suites["big"]
    assert read == packed
    ids = plain.example_ids()
    assert read.example_ids() == ids
    assert read.digests() == plain.digests()
    for spec in ("counts", "fractions"):
        got, want = read.stats_array(spec, ids), plain.stats_array(spec, ids)
        assert got.tobytes() == want.tobytes()
        subset = [ids[5], ids[0], ids[33]]
        assert read.stats_array(spec, subset).tobytes() == plain.stats_array(spec, subset).tobytes()
    assert np.signbit(read.stats_array("fractions", ids)[0, 1, 0])
    for example_id in ids:
        assert read.outputs_of(example_id) == plain.outputs_of(example_id)
        assert read.has_example(example_id)
    assert read.outputs_of("nope") is None and not read.has_example("nope")
    write_baseline(path, read_baseline(path))
    assert path.read_bytes() == first


def test_integer_columns_are_stored_as_small_integers() -> None:
    array = np.array([[0, 255, 256, 1.5, -3], [3, 1, 65_536, 2.0, 4]], dtype=np.float64)
    kinds, sha256, data = pack_columns(array)
    assert kinds == ["u1", "u1", "u4", "f8", "i8"]
    assert unpack_columns(kinds, 2, data, sha256, "x").tobytes() == array.tobytes()


def test_a_schema_1_file_still_reads_and_small_suites_stay_readable(tmp_path: Path) -> None:
    path = _write(tmp_path, _suite(packed=False))
    text = path.read_text()
    assert json.loads(text)["schema_version"] == "goldgate.baseline/1"
    assert '"packed"' not in text
    assert read_baseline(path).suites["big"].n_examples == 50


def _damage(tmp_path: Path, edit: Any) -> str:
    path = _write(tmp_path, _suite())
    document = json.loads(path.read_text())
    edit(document["suites"]["big"]["packed"], document)
    path.write_text(json.dumps(document))
    with pytest.raises(BaselineError) as caught:
        read_baseline(path)
    return str(caught.value)


def _flip(block: dict[str, Any]) -> None:
    data = block["data"]
    middle = len(data) // 2
    block["data"] = data[:middle] + ("A" if data[middle] != "A" else "B") + data[middle + 1 :]


def _duplicate_an_id(packed: dict[str, Any]) -> None:
    """The ids block with its second id replaced by the first, under a right sha256."""
    ids = json.loads(zlib.decompress(base64.b64decode(packed["ids"]["data"])))
    ids[1] = ids[0]
    sha256, data = pack_json(ids)
    packed["ids"] = {"sha256": sha256, "data": data}


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p, d: _duplicate_an_id(p), "ids: an id appears twice"),
        (lambda p, d: _flip(p["stats"]["counts"]), "statistics of 'counts'"),
        (lambda p, d: _flip(p["ids"]), "ids"),
        (lambda p, d: _flip(p["digests"]), "digests"),
        (lambda p, d: _flip(p["outputs"]), "outputs"),
        (lambda p, d: p["stats"]["counts"].update(sha256="0" * 64), "does not match its sha256"),
        (lambda p, d: p["stats"]["counts"]["columns"].pop(), "columns, expected 2×3"),
        (lambda p, d: p["stats"]["counts"].update(columns=["u1"] * 6), "need"),
        (lambda p, d: p.update(n=49), "expected a list of 49"),
        (lambda p, d: p["stats"].pop("fractions"), "no statistics for metric 'fractions'"),
        (lambda p, d: d.update(schema_version="goldgate.baseline/1"), "need schema_version"),
        (lambda p, d: p["stats"]["counts"].update(data="!!!"), "does not decode"),
    ],
)
def test_a_damaged_packed_suite_is_refused(tmp_path: Path, edit: Any, expected: str) -> None:
    message = _damage(tmp_path, edit)
    assert "damaged baseline" in message and expected in message
    assert "'big'" in message or "schema_version" in message


def test_packed_baseline_gates_exactly_like_the_json_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path, 60, seed=5)
    monkeypatch.chdir(tmp_path)
    config = load_config(tmp_path / "goldgate.yaml")
    results, sizes = {}, {}
    for label, threshold in (("json", 10**9), ("packed", 1)):
        monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", threshold)
        bless(config)
        sizes[label] = config.baseline.stat().st_size
        # change the outputs so that the gate compares, pairs and flips
        preds = tmp_path / "preds" / "gen.jsonl"
        original = preds.read_text()
        lines = original.splitlines()
        lines[3] = json.dumps({"id": "e3", "outputs": ["different", "text"]})
        preds.write_text("\n".join(lines) + "\n")
        run(config)
        preds.write_text(original)
        document = json.loads((tmp_path / "out" / "result.json").read_text())
        document.pop("created_at")
        results[label] = document
    assert results["json"] == results["packed"]
    assert results["packed"]["suites"][0]["metrics"][0]["baseline"] is not None
    assert sizes["packed"] < sizes["json"]
    assert "goldgate.baseline/2" in config.baseline.read_text()


def test_bless_new_only_keeps_a_packed_baseline_packed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path, 40, seed=2)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", 1)
    config = load_config(tmp_path / "goldgate.yaml")
    bless(config)
    before = read_baseline(config.baseline).suites["gen"]
    # a new example appears; the old ones keep their blessed outputs and statistics
    goldens = tmp_path / "goldens" / "gen.jsonl"
    goldens.write_text(
        goldens.read_text()
        + json.dumps({"id": "new", "input": "q", "references": ["a b"], "tags": ["x"]})
        + "\n"
    )
    preds = tmp_path / "preds" / "gen.jsonl"
    lines = preds.read_text().splitlines()
    lines[0] = json.dumps({"id": "e0", "outputs": ["changed", "changed"]})
    lines.append(json.dumps({"id": "new", "outputs": ["a b", "a"]}))
    preds.write_text("\n".join(lines) + "\n")
    bless(config, new_only=True)
    after = read_baseline(config.baseline).suites["gen"]
    assert after.packed is not None
    assert after.n_examples == 41
    assert after.outputs_of("e0") == before.outputs_of("e0")
    assert after.outputs_of("new") == ["a b", "a"]
    old_ids = before.example_ids()
    assert after.stats_array("bleu", old_ids).tobytes() == (
        before.stats_array("bleu", old_ids).tobytes()
    )


def test_dumps_never_writes_both_layouts() -> None:
    text = dumps_baseline(Baseline(goldgate_version="0.1.0", suites={"big": _suite(n=5)}))
    suite = json.loads(text)["suites"]["big"]
    assert set(suite) == {"golden_hash", "goldens", "binding", "samples", "metrics", "packed"}


def test_a_changed_golden_set_is_gated_alike_with_either_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path, 50, seed=8)
    monkeypatch.chdir(tmp_path)
    config = load_config(tmp_path / "goldgate.yaml")
    goldens = tmp_path / "goldens" / "gen.jsonl"
    original = goldens.read_text()
    results = {}
    for label, threshold in (("json", 10**9), ("packed", 1)):
        monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", threshold)
        goldens.write_text(original)
        bless(config)
        lines = original.splitlines()
        edited = json.loads(lines[4])
        edited["references"] = ["an edited reference"]
        lines[4] = json.dumps(edited)
        goldens.write_text("\n".join(lines[:-1]) + "\n")  # the last example removed
        run(config)
        document = json.loads((tmp_path / "out" / "result.json").read_text())
        document.pop("created_at")
        results[label] = document
    assert results["json"] == results["packed"]
    assert "golden_change" in json.dumps(results["packed"]) or "removed" in json.dumps(
        results["packed"]
    )


@pytest.mark.parametrize("packed", [True, False])
def test_blessed_outputs_and_positions_are_found_in_any_order(packed: bool) -> None:
    suite = _suite(n=30, samples=1, packed=packed)
    ids = suite.example_ids()
    outputs = suite.blessed_outputs()
    # in blessed order, out of it, again, and an id never blessed
    for example_id in [*ids, *reversed(ids), ids[3], ids[3], "nope", ids[0]]:
        want = None if example_id == "nope" else [f"out {example_id} ü"]
        assert outputs(example_id) == want
        assert suite.outputs_of(example_id) == want
    asked = [ids[2], "nope", ids[0]]
    assert suite.positions_of(asked).tolist() == [2, -1, 0]
    assert suite.positions_of(ids).tolist() == list(range(30))
    assert suite.positions_of([]).tolist() == []


def test_a_packed_suite_shares_the_golden_ids_and_builds_no_table_of_positions() -> None:
    from goldgate.model.golden_hashing import RecordDigests

    suite = _suite(n=30, samples=1)
    table = baseline_module._TABLES.get(id(suite))
    assert table is None or "position" not in vars(table.outputs)
    golden_ids = [(i + "x")[:-1] for i in suite.example_ids()]  # equal strings, other objects
    assert golden_ids[1] is not suite.example_ids()[1]
    digests = suite.digests()
    raw = b"".join(bytes.fromhex(digests[i]) for i in golden_ids)
    assert suite.same_digests(RecordDigests(golden_ids, raw))
    table = baseline_module._TABLES[id(suite)]
    assert table.ids is golden_ids
    assert suite.positions_of(tuple(golden_ids)).tolist() == list(range(30))
    assert suite.compact_stats("counts", golden_ids) is table.stats["counts"]
    for example_id in golden_ids[:4]:
        assert suite.blessed_outputs()(example_id) == [f"out {example_id} ü"]
    assert "position" not in vars(table.outputs)  # every lookup so far was in order
    assert not suite.same_digests(RecordDigests(golden_ids[::-1], raw[::-1]))


def test_statistics_found_by_position_need_no_table_of_positions() -> None:
    """The gate hands over the paired ids' positions (some examples left out, as after a
    golden record was edited): the statistics of those ids, and no id → position table."""
    suite = _suite(n=30, samples=1)
    ids = suite.example_ids()
    kept = [i for i in range(30) if i not in (4, 17)]
    at = np.array(kept, dtype=np.intp)
    assert suite.positions_of(tuple(ids)).tolist() == list(range(30))
    table = baseline_module._TABLES[id(suite)]
    paired = [ids[i] for i in kept]
    found = suite.compact_stats("counts", paired, at=at)
    assert "position" not in vars(table.outputs)
    assert as_float(found).tobytes() == as_float(table.stats["counts"])[:, kept].tobytes()
    everything = np.arange(30, dtype=np.intp)
    assert suite.compact_stats("counts", list(ids), at=everything) is table.stats["counts"]
    by_id = suite.compact_stats("counts", paired)  # without positions: looked up by id
    assert as_float(by_id).tobytes() == as_float(found).tobytes()


def test_a_few_outputs_asked_out_of_order_build_no_table_of_positions() -> None:
    """The blessed outputs of the few examples edited or removed since the baseline are
    found by a scan; past ``_SCANS_BEFORE_TABLE`` lookups out of order, by a table."""
    suite = _suite(n=30, samples=1)
    outputs = suite.blessed_outputs()
    assert isinstance(outputs, baseline_module.BlessedOutputs)
    ids = suite.example_ids()
    asked = [ids[7], "nope", ids[21], ids[3]]
    assert [outputs(i) for i in asked] == [
        [f"out {ids[7]} ü"],
        None,
        [f"out {ids[21]} ü"],
        [f"out {ids[3]} ü"],
    ]
    assert "position" not in vars(outputs)
    scattered = [ids[(5 * i) % 30] for i in range(40)]
    assert [outputs(i) for i in scattered] == [[f"out {i} ü"] for i in scattered]
    assert "position" in vars(outputs)  # many lookups out of order: the table pays


def test_a_block_that_inflates_past_its_size_is_refused_before_it_is_held() -> None:

    # 512 MiB of zeros in ~0.5 MB of zlib: a tampered digests block of 6,000 examples
    inflater = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    bomb = b"".join(inflater.compress(chunk) for _ in range(512)) + inflater.flush()
    sha256, _ = pack_bytes(b"")
    data = base64.b64encode(bomb).decode()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(PackError, match="inflates past the 48000 bytes"):
        unpack_bytes(data, sha256, "digests", size=48_000)
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 64  # never the 512 MiB it would inflate to
    # a block of the expected size still decodes, and a truncated one is refused
    sha256, data = pack_bytes(b"x" * 48_000)
    assert unpack_bytes(data, sha256, "digests", size=48_000) == b"x" * 48_000
    cut = base64.b64encode(base64.b64decode(data)[:-6]).decode()
    with pytest.raises(PackError, match="does not decode"):
        unpack_bytes(cut, sha256, "digests", size=48_000)


def _bomb(mib: int) -> str:
    """``mib`` MiB of zeros as a block's base64 zlib data (about a thousand to one)."""
    inflater = zlib.compressobj(9)
    chunk = bytes(1 << 20)
    bomb = b"".join(inflater.compress(chunk) for _ in range(mib)) + inflater.flush()
    return base64.b64encode(bomb).decode()


@pytest.mark.parametrize("block", ["ids", "outputs"])
def test_an_ids_or_outputs_block_that_inflates_past_its_bound_is_refused_before_it_is_held(
    tmp_path: Path, block: str
) -> None:
    # 512 MiB of zeros in ~0.5 MB: the ids and outputs blocks (JSON, no size known beforehand)
    # were inflated whole, then refused by their sha256; 50 examples' ids or outputs are
    # bounded by what that many may take
    bomb = _bomb(512)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    message = _damage(tmp_path, lambda p, d: p[block].update(data=bomb))
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 64  # never the 512 MiB it would inflate to
    assert str(tmp_path / "goldgate.baseline.json") in message
    assert f"suite 'big': {block}: the packed data inflates past the" in message
    ids, outputs = baseline_module.ids_limit(50), baseline_module.outputs_limit(50, 2)
    limit = ids if block == "ids" else outputs
    assert f"past the {limit} bytes it may hold" in message


def test_bless_refuses_to_pack_ids_or_outputs_that_reading_would_refuse() -> None:
    long_ids = [f"{i:05d}" + "x" * baseline_module.IDS_BYTES_PER_EXAMPLE for i in range(3)]
    with pytest.raises(BaselineError, match="cannot pack a baseline whose ids take"):
        SuiteBaseline.build(
            golden_hash="sha256:abc",
            goldens="g.jsonl",
            samples=1,
            metrics={},
            ids=long_ids,
            digests=["0" * 16] * 3,
            outputs=[["a"]] * 3,
            stats={},
            packed=True,
        )
    long_output = "y" * (baseline_module.OUTPUT_BYTES_PER_SAMPLE + 1)
    with pytest.raises(BaselineError, match="cannot pack a baseline whose outputs take"):
        SuiteBaseline.build(
            golden_hash="sha256:abc",
            goldens="g.jsonl",
            samples=1,
            metrics={},
            ids=["a", "b", "c"],
            digests=["0" * 16] * 3,
            outputs=[[long_output]] * 3,
            stats={},
            packed=True,
        )


@pytest.mark.parametrize(
    "outputs", [[7, 7, 7], [[{"x": 1}], ["b"], ["c"]], ["abc", ["b"], ["c"]], [[], ["b"], ["c"]]]
)
def test_blessed_outputs_that_are_not_lists_of_strings_are_a_damaged_baseline(
    outputs: list[Any],
) -> None:
    # the block's sha256 is right (an edit by hand): its entries must still be lists of texts,
    # or the reports index into ints and dicts (an internal error, exit 3, not a refusal)
    sha256, data = pack_json(outputs)
    blessed = baseline_module.BlessedOutputs(
        ["a", "b", "c"], baseline_module.PackedBlock(sha256=sha256, data=data), samples=1
    )
    with pytest.raises(BaselineError, match="damaged baseline: outputs: expected a list of 3"):
        blessed("a")
