"""The bounded-memory paths at small sizes: batched, streamed and viewed gives what whole gave.

Each path that avoids holding a million-example structure at once (the golden hash fed in
batches, the examples side file compressed row batch by row batch, the gate's views instead
of copies, lines split lazily) is checked here against the plain definition, with batch
sizes small enough that the boundaries fall everywhere.
"""

from __future__ import annotations

import gc
import gzip
import hashlib
import json
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from goldgate.errors import InputError
from goldgate.execution import pool as parallel
from goldgate.gate import rules as gate
from goldgate.io.inputs import MAX_NESTING, loads_json
from goldgate.io.text_inputs import split_lines
from goldgate.model import baseline as baseline_module
from goldgate.model import compact_stats, golden_hashing
from goldgate.model import examples_file as examples_file_module
from goldgate.model.compact_stats import CompactStats, Statistics, take
from goldgate.model.config_loading import load_config
from goldgate.model.example_table import ExampleResult
from goldgate.model.golden_hashing import content_hash
from goldgate.model.golden_records import GoldenRecord
from goldgate.model.result import RunResult, SuiteResult, Verdict
from goldgate.runner import bless, bless_reviewed, run
from tests.metrics.test_parallel import WORDS

CONFIG = """\
version: 1
system: {predictions: "preds.jsonl"}
suites:
  qa:
    goldens: goldens.jsonl
    metrics: {bleu: {}, chrf: {}, rougeL: {}, exact_match: {}, token_f1: {}}
    gate: {bleu: {max_drop: 0.5}, exact_match: {max_flips: 1000, slices: true},
           token_f1: {max_drop: 1.0, slices: true}}
significance: {resamples: 100, seed: 5}
report: {dir: out, formats: [json]}
"""


def _definition_hash(records: list[GoldenRecord]) -> str:
    """The golden hash as the documentation defines it: one JSON text of the sorted records."""
    canonical = [
        {"id": r.id, "input": r.input, "references": list(r.references), "tags": sorted(r.tags)}
        for r in sorted(records, key=lambda r: r.id)
    ]
    text = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("batch", [1, 2, 3, 4096])
def test_the_golden_hash_fed_in_batches_is_the_hash_of_the_whole_text(
    batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(golden_hashing, "_HASH_BATCH", batch)
    rng = random.Random(batch)
    for n in (0, 1, 2, 3, 4, 7):
        records = [
            GoldenRecord(
                id=f"é-{rng.randrange(10**6)}-{i}",
                input={"q": [1.5, "x\u2028y"], "n": None} if i % 2 else f"input ✓ {i}",
                references=(f"ref {i}", "b"),
                tags=("z", "a") if i % 3 else (),
            )
            for i in range(n)
        ]
        assert content_hash(records) == _definition_hash(records)


@pytest.mark.parametrize(
    "text", ["", "\n", "a", "a\n", "a\nb", "\n\na\r\n\n", "x\u2028y\nz\u0085", "a\n\n"]
)
def test_lines_are_split_lazily_as_split_would(text: str) -> None:
    assert list(split_lines(text)) == text.split("\n")


def _example(i: int) -> ExampleResult:
    return ExampleResult(
        id=f"e{i}",
        line=i + 1,
        tags=["t"] if i % 2 else [],
        input={"q": f"question {i} ✓"},
        references=[f"ref {i}"],
        output=f"out {i}",
        scores={"bleu": i / 3},
        new=i % 5 == 0,
    )


def _result(sizes: list[int]) -> RunResult:
    suites = [
        SuiteResult(
            name=f"suite-{index}",
            verdict=Verdict.PASS,
            goldens="g.jsonl",
            golden_hash="sha256:0",
            n_examples=size,
            metrics=[],
            checks=[],
            examples=[_example(i) for i in range(size)],
        )
        for index, size in enumerate(sizes)
    ]
    return RunResult(
        goldgate_version="0",
        created_at="2026-01-01T00:00:00+00:00",
        verdict=Verdict.PASS,
        baseline="b.json",
        baseline_found=False,
        suites=suites,
    )


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sizes", [[0], [1], [3], [4], [5], [4, 0, 9], [0, 0], [60, 3]])
def test_the_examples_file_compressed_in_batches_is_gzip_of_the_whole_text(
    sizes: list[int], threads: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Whether the batches are compressed as they come or in a thread of their own (with
    two waiting at most: the 63 rows make 16 batches)."""
    monkeypatch.setattr(examples_file_module, "_ROWS_PER_BATCH", 4)
    monkeypatch.setattr(examples_file_module, "_QUEUED_BATCHES", 2)
    result = _result(sizes)
    lines = [
        '{"suite":' + json.dumps(suite.name) + "," + ex.model_dump_json(exclude_defaults=True)[1:]
        for suite in result.suites
        for ex in suite.examples
    ]
    text = "\n".join(lines) + "\n" if lines else ""
    _, data = result.to_files(threads=threads)
    # byte for byte one gzip stream of the whole text (no timestamp), as zlib writes it on
    # every Python: gzip.compress writes the OS byte as 3 (Unix) up to 3.12, 255 from 3.13
    assert data == zlib.compress(text.encode("utf-8"), 6, wbits=31)
    assert data[9] == 3 and data[4:8] == bytes(4)  # the header's OS byte, and no mtime
    assert gzip.decompress(data).decode("utf-8") == text
    written, side = result.to_files()
    (tmp_path / "result.json").write_text(written)
    (tmp_path / examples_file_module.EXAMPLES_FILE).write_bytes(side)
    back = RunResult.from_json_file(tmp_path / "result.json")
    assert [s.examples for s in back.suites] == [s.examples for s in result.suites]


def test_a_view_is_taken_only_for_a_contiguous_run() -> None:
    stats = np.arange(2 * 10 * 3, dtype=np.float64).reshape(2, 10, 3)
    compact = CompactStats.of(stats)
    cases = [[2, 3, 4], [0], list(range(10)), [1, 3, 4], [4, 3, 2], [2, 2, 3], []]
    for indices in cases:
        positions = np.array(indices, dtype=np.intp)
        taken = take(stats, positions)
        assert np.array_equal(taken, stats[:, indices])
        contiguous = len(indices) > 0 and indices == list(range(indices[0], indices[-1] + 1))
        assert np.shares_memory(taken, stats) == contiguous
        part = compact.take(positions)
        assert isinstance(part, CompactStats)
        assert part.expand().tobytes() == stats[:, indices].tobytes()
        shared = [
            np.shares_memory(a, b) for a, b in zip(part.columns, compact.columns, strict=True)
        ]
        assert all(shared) if contiguous else not any(shared)


def _copying_take(stats: Statistics, indices: npt.NDArray[np.intp]) -> Statistics:
    """``take`` without views: what the gate computes must not depend on them."""
    if isinstance(stats, CompactStats):
        return stats.take(indices, view=False)
    return stats[:, indices]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(1, 8)))


def _project(root: Path, ids: list[str], seed: int, changed: float) -> None:
    rng = random.Random(seed)
    (root / "goldgate.yaml").write_text(CONFIG)
    goldens_rows, preds = [], []
    for example_id in ids:
        refs = [_text(rng) for _ in range(rng.randint(1, 3))]
        tags = rng.sample(["x", "y", "z"], rng.randint(0, 2))
        goldens_rows.append({"id": example_id, "input": _text(rng), "references": refs})
        if tags:
            goldens_rows[-1]["tags"] = tags
        output = refs[0] if rng.random() < 0.5 else _text(rng)
        if rng.random() < changed:
            output = _text(rng)
        preds.append({"id": example_id, "output": output})
    for name, rows in (("goldens.jsonl", goldens_rows), ("preds.jsonl", preds)):
        (root / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def _outcome(root: Path) -> tuple[dict[str, Any], list[str], bytes]:
    document = json.loads((root / "out" / "result.json").read_text())
    document.pop("created_at")
    rows = gzip.decompress((root / "out" / examples_file_module.EXAMPLES_FILE).read_bytes())
    baseline = (root / "goldgate.baseline.json").read_bytes()
    return document, rows.decode("utf-8").splitlines(), baseline


def _bless_then_run(root: Path, ids: list[str], later_ids: list[str]) -> None:
    _project(root, ids, seed=1, changed=0.0)
    bless(load_config(root / "goldgate.yaml"))
    # today: some outputs changed, and the golden set lost and gained examples
    _project(root, later_ids, seed=1, changed=0.2)
    run(load_config(root / "goldgate.yaml"), history_source=None)


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_views_and_batches_give_the_result_of_copies_and_whole_passes(
    order: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same bless and run (golden set changed since the bless, so only part is paired)
    with every batch at its default and with copies, batches of one and chunks of 7."""
    ids = [f"q{i:04d}" for i in range(150)]
    if order == "shuffled":
        random.Random(0).shuffle(ids)
    # removed in the middle and at the end, added at the end: pairing is not contiguous
    later = [i for i in ids if i not in {"q0040", "q0041", "q0099", "q0149"}] + ["q0500", "q0501"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    _bless_then_run(tmp_path / "a", ids, later)
    with monkeypatch.context() as patched:
        patched.setattr(gate, "take", _copying_take)
        patched.setattr(examples_file_module, "_ROWS_PER_BATCH", 1)
        patched.setattr(golden_hashing, "_HASH_BATCH", 1)
        patched.setattr(parallel, "DEFAULT_CHUNK_SIZE", 7)
        (tmp_path / "b").mkdir()
        _bless_then_run(tmp_path / "b", ids, later)
    first, second = _outcome(tmp_path / "a"), _outcome(tmp_path / "b")
    assert first == second
    document, rows, _ = first
    assert document["suites"][0]["golden_change"]["removed"]
    assert len(rows) == len(later)
    assert {c["slice"] for c in document["suites"][0]["checks"]} == {None, "x", "y", "z"}


def test_bless_of_a_predictions_file_does_not_read_the_last_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its outputs are read from the file anyway; the saved result would be read for nothing."""
    _project(tmp_path, [f"q{i}" for i in range(20)], seed=2, changed=0.0)
    config = load_config(tmp_path / "goldgate.yaml")
    run(config, history_source=None)

    def refuse(*args: object, **kwargs: object) -> RunResult:
        raise AssertionError("the saved result was read")

    monkeypatch.setattr(RunResult, "from_json_file", refuse)
    outcome = bless_reviewed(config)
    assert outcome.written
    assert outcome.review.suites[0].n_examples == 20


@pytest.mark.parametrize("depth", [1, 99, 100, 101, 150])
def test_nesting_is_refused_beyond_the_limit_whether_or_not_it_is_walked(depth: int) -> None:
    deep = "[" * depth + "]" * depth
    # brackets inside strings count toward the bound but not the nesting: walked, accepted
    shallow = json.dumps({"text": "[{" * depth})
    for text in (deep, deep.encode()):
        if depth > MAX_NESTING:
            with pytest.raises(InputError, match="nested more than 100 levels deep"):
                loads_json(text, "f:1", InputError)
        else:
            assert loads_json(text, "f:1", InputError) is not None
    assert loads_json(shallow, "f:1", InputError) == {"text": "[{" * depth}


def test_the_bootstrap_commands_load_numpy_with_one_blas_thread_and_leave_no_trace() -> None:
    code = (
        "import os, sys\n"
        "from goldgate.cli.main import _single_threaded_blas\n"
        "_single_threaded_blas()\n"
        "assert 'numpy' in sys.modules\n"
        "assert 'OPENBLAS_NUM_THREADS' not in os.environ\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_an_empty_blas_thread_count_is_no_choice() -> None:
    # OpenBLAS reads an empty OPENBLAS_NUM_THREADS as unset (a thread per core): goldgate
    # still loads it with one, and leaves the variable as it found it
    code = (
        "import os, sys\n"
        "from goldgate.cli.main import _single_threaded_blas\n"
        "_single_threaded_blas()\n"
        "import numpy\n"
        "assert os.environ['OPENBLAS_NUM_THREADS'] == ''\n"
        "assert len(os.listdir('/proc/self/task')) == 1, os.listdir('/proc/self/task')\n"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": ""}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


def test_paired_scores_read_as_the_dict_of_each_metric() -> None:
    position = {"b": 0, "d": 1, "a": 2}
    scores = gate.PairedScores(position, [0.5, 1.0, 100.0])
    assert dict(scores) == {"b": 0.5, "d": 1.0, "a": 100.0}
    assert list(scores) == ["b", "d", "a"]
    assert scores == {"a": 100.0, "b": 0.5, "d": 1.0}
    assert "d" in scores and "c" not in scores and len(scores) == 3
    with pytest.raises(KeyError):
        scores["c"]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc")
def test_score_loads_numpy_with_one_blas_thread(tmp_path: Path) -> None:
    # `goldgate score` multiplies no matrix: OpenBLAS's threads would only cost start-up time.
    data = tmp_path / "data.jsonl"
    data.write_text('{"candidate": "a cat", "references": ["the cat"]}\n')
    code = (
        "import os, sys\n"
        "from goldgate.cli.main import main\n"
        f"assert main(['score', {str(data)!r}, '--metric=bleu', '--json']) == 0\n"
        "assert 'numpy' in sys.modules\n"
        "assert 'OPENBLAS_NUM_THREADS' not in os.environ\n"
        "assert len(os.listdir('/proc/self/task')) == 1, os.listdir('/proc/self/task')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


def _bless_then_edit(root: Path, ids: list[str], edited: set[str]) -> None:
    _project(root, ids, seed=2, changed=0.0)
    bless(load_config(root / "goldgate.yaml"))
    rows = [json.loads(line) for line in (root / "goldens.jsonl").read_text().splitlines()]
    for row in rows:
        if row["id"] in edited:
            row["references"] = [*row["references"], "an added reference"]
    (root / "goldens.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run(load_config(root / "goldgate.yaml"), history_source=None)


def test_a_run_after_a_few_golden_records_were_edited_gives_the_result_of_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A packed baseline, two of 400 golden records edited since: the paired examples are
    read through gapped views of both sides' statistics, not copies, with the same result."""
    monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", 100)
    monkeypatch.chdir(tmp_path)
    ids = [f"q{i:04d}" for i in range(400)]
    edited = {"q0100", "q0301"}
    found: list[int] = []
    gaps_of = compact_stats._gaps

    def counted(indices: npt.NDArray[np.intp]) -> npt.NDArray[np.intp] | None:
        gaps = gaps_of(indices)
        found.append(-1 if gaps is None else len(gaps))
        return gaps

    (tmp_path / "a").mkdir()
    with monkeypatch.context() as patched:
        patched.setattr(compact_stats, "_gaps", counted)
        _bless_then_edit(tmp_path / "a", ids, edited)
    # every metric on both sides (five), the suite's current statistics at least
    assert found.count(2) >= 10
    (tmp_path / "b").mkdir()
    with monkeypatch.context() as patched:
        patched.setattr(compact_stats, "_GAPPED_SHARE", 0.0)
        _bless_then_edit(tmp_path / "b", ids, edited)
    first, second = _outcome(tmp_path / "a"), _outcome(tmp_path / "b")
    assert first == second
    change = first[0]["suites"][0]["golden_change"]
    assert sorted(item["id"] for item in change["edited"]) == sorted(edited)
    assert change["n_shared"] == len(ids) - len(edited)


def test_the_blessed_outputs_decoded_for_edited_examples_are_not_held_across_the_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blessed outputs of the examples edited since the baseline come from decoding the
    packed block whole; the history is written without it held, and the reports decode it
    again, with the same rows."""
    from goldgate.history import recording

    monkeypatch.setattr(baseline_module, "PACK_MIN_EXAMPLES", 100)
    monkeypatch.chdir(tmp_path)
    ids = [f"q{i:04d}" for i in range(200)]
    _project(tmp_path, ids, seed=3, changed=0.0)
    config = load_config(tmp_path / "goldgate.yaml")
    bless(config)
    rows = [json.loads(line) for line in (tmp_path / "goldens.jsonl").read_text().splitlines()]
    rows[50]["references"] = ["an edited reference"]
    (tmp_path / "goldens.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    decoded: list[int] = []
    decode = baseline_module._decode_outputs
    held: list[bool] = []
    record = recording.record_run

    def counted(block: baseline_module.PackedBlock, n: int, samples: int) -> list[list[str]]:
        decoded.append(n)
        return decode(block, n, samples)

    def recording_run(*args: Any, **kwargs: Any) -> list[str]:
        held.extend(
            vars(o).get("_outputs") is not None
            for o in gc.get_objects()
            if isinstance(o, baseline_module.BlessedOutputs)
        )
        return record(*args, **kwargs)

    monkeypatch.setattr(baseline_module, "_decode_outputs", counted)
    monkeypatch.setattr(recording, "record_run", recording_run)
    result = run(config, history_source="run")
    assert decoded == [200, 200]  # for the edited example, then for the reports
    assert held and not any(held)
    change = result.suites[0].golden_change
    assert change is not None and [e.id for e in change.edited] == ["q0050"]
    assert change.edited[0].baseline_output is not None
    text = gzip.decompress((tmp_path / "out" / examples_file_module.EXAMPLES_FILE).read_bytes())
    examples = [json.loads(line) for line in text.decode("utf-8").splitlines()]
    assert sum("baseline_output" in row for row in examples) == len(ids) - 1
