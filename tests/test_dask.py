"""Dask: a LocalCluster of two workers gives the result.json of a local run, byte for byte.

Also for golden sets and predictions of many files (globs, file:// URLs) read, validated and
scored on the workers, JSONL and Parquet; every bad input is an error naming its file and line.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goldgate.errors import GoldenSetError, GoldgateError, InputError, SystemRunError, UsageError
from goldgate.execution import pool as parallel
from goldgate.execution.dask.engine import DaskWorkerError, client_for, close_clients, result_of
from goldgate.metrics.registry import FunctionMetric
from goldgate.model.baseline import Baseline
from goldgate.model.baseline_io import dumps_baseline
from goldgate.model.compact_stats import as_float
from goldgate.model.config import Config, DaskConfig
from goldgate.model.config_loading import load_config
from goldgate.pipeline.score import score_suite
from goldgate.runner import bless, check, run
from tests.test_scale import make_project

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")
pq = pytest.importorskip("pyarrow.parquet")
pa = pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """Two worker processes on loopback, ephemeral ports only; its address."""
    # A task that killed one worker is retried once; killing a second is an error. A
    # LocalCluster closes the nanny of a worker that is gone lost-worker-timeout (15 s) after
    # an earlier death of a worker of that name: tests that kill workers about that far apart
    # would leave the cluster without workers.
    settings = {
        "distributed.scheduler.allowed-failures": 1,
        "distributed.deploy.lost-worker-timeout": "1h",
    }
    with dask.config.set(settings):
        local = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address="127.0.0.1:0",  # None still listens on 8787
        )
        try:
            yield str(local.scheduler_address)
        finally:
            close_clients()
            local.close()


def _on(config: Any, address: str | None) -> Any:
    dask_config = DaskConfig(address=address) if address else None
    engine = config.engine.model_copy(update={"dask": dask_config, "jobs": 1})
    return config.model_copy(update={"engine": engine})


def _result(root: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((root / "out" / "result.json").read_text())
    document.pop("created_at")
    return document


def test_predictions_scored_on_the_cluster_equal_a_local_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    make_project(tmp_path, 90, seed=4)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(parallel, "DEFAULT_CHUNK_SIZE", 17)
    config = load_config(tmp_path / "goldgate.yaml")
    outcome = {}
    for label, address in (("local", None), ("dask", cluster)):
        configured = _on(config, address)
        bless(configured)
        baseline = configured.baseline.read_bytes()
        run(configured)
        outcome[label] = (baseline, _result(tmp_path))
    assert outcome["local"] == outcome["dask"]


SYSTEM = """\
import os
import time

def answer(question):
    if question == "explode":
        raise ValueError("cannot answer that")
    if question == "slow":
        time.sleep(3)
    # where it ran, outside the output: the output must not depend on the worker
    with open(os.path.join(os.path.dirname(__file__), "pids.txt"), "a") as handle:
        handle.write(f"{os.getpid()}\\n")
    return question.split()[0] if question.split() else "?"
"""

CALLABLE_CONFIG = """\
version: 1
system: {callable: "dasksys:answer", cache: "off", concurrency: 4}
suites:
  gen:
    goldens: goldens/gen.jsonl
    metrics: {bleu: {}, chrf: {}, exact_match: {}, token_f1: {}}
    gate: {bleu: {min: 0.0}}
significance: {resamples: 100, seed: 1}
report: {dir: out, formats: [json]}
"""


def test_a_callable_system_runs_on_the_workers_with_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    make_project(tmp_path, 40, seed=6)
    (tmp_path / "goldgate.yaml").write_text(CALLABLE_CONFIG)
    (tmp_path / "dasksys.py").write_text(SYSTEM)
    pids = tmp_path / "pids.txt"
    monkeypatch.chdir(tmp_path)
    config = load_config(tmp_path / "goldgate.yaml")
    results = {}
    for label, address in (("local", None), ("dask", cluster)):
        pids.write_text("")
        run(_on(config, address))
        results[label] = _result(tmp_path)
        ran_in = set(pids.read_text().split())
        assert (ran_in == {str(os.getpid())}) == (label == "local"), ran_in
    assert results["local"] == results["dask"]
    assert results["dask"]["verdict"] == "pass"

    # a call that raises on a worker is an error naming its id, as locally
    goldens = tmp_path / "goldens" / "gen.jsonl"
    rows = [json.loads(line) for line in goldens.read_text().splitlines()]
    rows[7]["input"] = "explode"
    goldens.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(SystemRunError, match=r"raised ValueError: cannot answer that \(id 'e7'\)"):
        score_suite(_on(config, cluster), "gen")
    # and so is a call past timeout_s
    rows[7]["input"] = "slow"
    goldens.write_text("".join(json.dumps(row) + "\n" for row in rows))
    system = config.system.model_copy(update={"timeout_s": 1.0})
    with pytest.raises(SystemRunError, match=r"no answer within timeout_s=1s \(id 'e7'\)"):
        score_suite(_on(config.model_copy(update={"system": system}), cluster), "gen")


def dies_once(candidate: str, references: list[str]) -> float:
    """Kills its worker the first time it sees 'die:MARKER' (the marker file says so)."""
    if candidate.startswith("die:"):
        marker = Path(candidate.removeprefix("die:"))
        if not marker.exists():
            marker.write_text("died")
            os._exit(1)
    return float(len(candidate))


def always_dies(candidate: str, references: list[str]) -> float:
    if candidate.startswith("die:"):
        os._exit(1)
    return 1.0


# a dead worker is replaced by a fresh process that imports goldgate again: slow on a loaded
# machine, so these get more than the suite-wide 120 s before they count as a hang
@pytest.mark.timeout(360)
def test_a_killed_worker_is_survived_or_a_clear_error(tmp_path: Path, cluster: str) -> None:
    cands = ["a", "bb", f"die:{tmp_path / 'marker'}", "ccc"] * 5
    refs = [["x"]] * len(cands)
    once = FunctionMetric("dies_once", dies_once, FunctionMetric.Options())
    # retried on the replacement worker: complete and equal to a local score
    [got] = parallel.score_arrays([("m", once)], cands, refs, chunk_size=3, dask=cluster)
    [local] = parallel.score_arrays([("m", once)], cands, refs, chunk_size=3, jobs=1)
    assert got.tolist() == local.tolist()
    assert (tmp_path / "marker").exists()
    # killing every worker it lands on: an error, never a partial score
    every = FunctionMetric("always_dies", always_dies, FunctionMetric.Options())
    with pytest.raises(DaskWorkerError, match="no score was computed"):
        parallel.score_arrays([("m", every)], cands, refs, chunk_size=3, dask=cluster)


# -- golden sets and predictions of many files, read on the cluster (dask_data) ---------------

#: uneven golden files (one of a single record) and predictions split elsewhere, reversed
GOLDEN_SPLITS = [(0, 9), (9, 30), (30, 31), (31, 60)]
PREDICTION_SPLITS = [(0, 25), (25, 60)]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict[str, Any]], parquet: bool) -> None:
    if parquet:
        pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=7)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def _split(root: Path, parquet: bool) -> tuple[str, str]:
    """The project's golden set and predictions as partitions; their goldens/predictions."""
    suffix = "parquet" if parquet else "jsonl"
    goldens = _rows(root / "goldens" / "gen.jsonl")
    predictions = _rows(root / "preds" / "gen.jsonl")
    for index, (start, end) in enumerate(GOLDEN_SPLITS):
        _write(root / "goldens" / f"part-{index}.{suffix}", goldens[start:end], parquet)
    for index, (start, end) in enumerate(PREDICTION_SPLITS):
        part = predictions[start:end][::-1]
        _write(root / "preds" / f"part-{index}.{suffix}", part, parquet)
    return f"goldens/part-*.{suffix}", f"file://{root}/preds/part-*.{suffix}"


def _configured(
    config: Config, address: str | None, goldens: str | None = None, predictions: str | None = None
) -> Config:
    """``config`` on the cluster at ``address`` with these goldens and predictions locations."""
    suites = config.suites
    if goldens is not None:
        raw = {**config.suites["gen"].model_dump(), "goldens": goldens}
        raw.pop("system")
        suite = type(config.suites["gen"]).model_validate(raw)
        if "://" not in goldens:
            suite = suite.model_copy(update={"goldens": config.root / goldens})
        suites = {"gen": suite}
    system = config.system
    if predictions is not None and system is not None:
        system = system.model_copy(update={"predictions": predictions})
    engine = config.engine.model_copy(
        update={"dask": DaskConfig(address=address) if address else None, "jobs": 1}
    )
    return config.model_copy(update={"engine": engine, "suites": suites, "system": system})


def _outcome(config: Config) -> tuple[bytes, dict[str, Any]]:
    """The baseline bytes of a bless and the result of a run against it, made comparable:
    the golden set's location is the one place they may differ, a line is only kept for a
    one-file set and so is the hash of the file's bytes."""
    bless(config)
    document = json.loads(config.baseline.read_text())
    document["suites"]["gen"].pop("golden_file_hash", None)
    config.baseline.write_text(dumps_baseline(Baseline.model_validate(document)))
    label = json.dumps(document["suites"]["gen"]["goldens"])
    baseline = config.baseline.read_bytes().replace(label.encode(), b'"GOLDENS"')
    run(config)
    result: dict[str, Any] = json.loads((config.root / "out" / "result.json").read_text())
    result.pop("created_at")
    for suite in result["suites"]:
        suite["goldens"] = "GOLDENS"
        for example in suite["examples"]:
            example.pop("line", None)
    return baseline, result


@pytest.mark.parametrize("parquet", [False, True], ids=["jsonl", "parquet"])
def test_partitions_read_on_the_cluster_give_the_local_result_and_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str, parquet: bool
) -> None:
    make_project(tmp_path, 60, seed=8)
    monkeypatch.chdir(tmp_path)
    config = load_config(tmp_path / "goldgate.yaml")
    local = _outcome(_configured(config, None))
    goldens, predictions = _split(tmp_path, parquet)
    (tmp_path / "goldens" / "gen.jsonl").unlink()  # the cluster reads only the partitions
    (tmp_path / "preds" / "gen.jsonl").unlink()
    on_dask = _configured(config, cluster, goldens, predictions)
    assert _outcome(on_dask) == local
    assert b"GOLDENS" in local[0]
    # the golden set as `check` sees it: the same content hash as the one file's
    [found] = check(on_dask)
    assert found.error is None
    assert found.golden_hash == local[1]["suites"][0]["golden_hash"]
    assert found.n_examples == 60
    # progress counts each partition's examples as its statistics arrive
    said: list[tuple[str, Any]] = []

    class Recorder:
        def start(self, total: int, label: str) -> None:
            said.append(("start", (total, label)))

        def advance(self, n: int = 1) -> None:
            said.append(("advance", n))

        def finish(self) -> None:
            said.append(("finish", None))

    score_suite(on_dask, "gen", progress=Recorder())
    assert said[0] == ("start", (60, "gen: scoring 4 files on Dask"))
    assert [n for kind, n in said if kind == "advance"] == [9, 21, 1, 29]
    assert said[-1] == ("finish", None)


def test_a_file_url_golden_set_is_named_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    make_project(tmp_path, 20, seed=2)
    monkeypatch.chdir(tmp_path)
    url = f"file://{tmp_path}/goldens/gen.jsonl"
    text = (tmp_path / "goldgate.yaml").read_text().replace("goldens/gen.jsonl", url)
    text += f"engine: {{dask: {{address: '{cluster}'}}}}\n"
    (tmp_path / "goldgate.yaml").write_text(text)
    config = load_config(tmp_path / "goldgate.yaml")
    assert config.suites["gen"].goldens_location == url
    result = run(config)
    assert result.suites[0].error is None
    assert result.suites[0].goldens == url
    # one file: its lines are kept
    assert [example.line for example in result.suites[0].examples[:3]] == [1, 2, 3]


def test_a_callable_system_gets_a_golden_set_of_many_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    make_project(tmp_path, 40, seed=6)
    (tmp_path / "goldgate.yaml").write_text(CALLABLE_CONFIG)
    (tmp_path / "dasksys.py").write_text(SYSTEM)
    monkeypatch.chdir(tmp_path)
    config = load_config(tmp_path / "goldgate.yaml")
    run(_on(config, None))
    local = _result(tmp_path)
    goldens, _ = _split(tmp_path, parquet=False)
    (tmp_path / "goldens" / "gen.jsonl").unlink()
    on_dask = _configured(config, cluster, goldens)
    run(on_dask)
    got = _result(tmp_path)
    for document in (local, got):
        document["suites"][0]["goldens"] = "GOLDENS"
        for example in document["suites"][0]["examples"]:
            example.pop("line", None)
    assert got == local
    # the golden files are goldgate's, not the system's code: editing them is no new system
    from goldgate.pipeline.plan import own_files

    own = set(own_files(on_dask))
    assert {tmp_path / "goldens" / f"part-{i}.jsonl" for i in range(4)} <= own


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str) -> Config:
    make_project(tmp_path, 60, seed=9)
    monkeypatch.chdir(tmp_path)
    goldens, predictions = _split(tmp_path, parquet=False)
    return _configured(load_config(tmp_path / "goldgate.yaml"), cluster, goldens, predictions)


def test_a_bad_record_names_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    config = _project(tmp_path, monkeypatch, cluster)
    part = tmp_path / "goldens" / "part-3.jsonl"
    rows = _rows(part)
    rows[4]["references"] = []
    _write(part, rows, parquet=False)
    with pytest.raises(GoldenSetError) as raised:
        score_suite(config, "gen")
    assert str(raised.value) == f"{part}:5: id 'e35': 'references' is empty"
    # and as a suite error of a run (exit 2), never a score
    result = run(config)
    assert result.verdict.exit_code == 2
    assert result.suites[0].error == str(raised.value)

    # bad UTF-8 and bad JSON are named as a local read names them
    part.write_bytes(b'{"id": "x", "input": "a", "reference": "b"}\n{"id": "y", \xff}\n')
    with pytest.raises(GoldenSetError, match=r"part-3\.jsonl:2:13: not valid UTF-8"):
        score_suite(config, "gen")


def test_a_bad_parquet_row_names_its_file_and_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    make_project(tmp_path, 60, seed=9)
    monkeypatch.chdir(tmp_path)
    goldens, predictions = _split(tmp_path, parquet=True)
    config = _configured(load_config(tmp_path / "goldgate.yaml"), cluster, goldens, predictions)
    part = tmp_path / "goldens" / "part-1.parquet"
    rows = pq.read_table(part).to_pylist()
    rows[11]["input"] = None
    _write(part, rows, parquet=True)
    with pytest.raises(GoldenSetError, match=rf"^{re.escape(str(part))}:12: id 'e20': no 'input'$"):
        score_suite(config, "gen")


def test_an_id_in_two_partitions_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    config = _project(tmp_path, monkeypatch, cluster)
    goldens = tmp_path / "goldens"
    rows = _rows(goldens / "part-3.jsonl")
    rows[2]["id"] = "e4"
    _write(goldens / "part-3.jsonl", rows, parquet=False)
    with pytest.raises(GoldenSetError) as raised:
        score_suite(config, "gen")
    assert str(raised.value) == (
        f"{goldens / 'part-3.jsonl'}:3: duplicate id 'e4' (first on {goldens / 'part-0.jsonl'}:5)"
    )
    # a callable or command system, and `check`, gather the golden set: the same error
    assert check(config)[0].error == str(raised.value)

    # predictions: an id twice across files, one unknown, one missing
    (tmp_path / "p").mkdir()
    config = _project(tmp_path / "p", monkeypatch, cluster)
    preds = tmp_path / "p" / "preds"
    rows = _rows(preds / "part-1.jsonl")
    _write(preds / "part-1.jsonl", [*rows, _rows(preds / "part-0.jsonl")[0]], parquet=False)
    with pytest.raises(InputError, match=r"part-1\.jsonl:36: duplicate id 'e24' \(first on "):
        score_suite(config, "gen")
    rows[0]["id"] = "nope"
    _write(preds / "part-1.jsonl", rows, parquet=False)
    with pytest.raises(SystemRunError, match=r"1 id\(s\) not in the golden set .*'nope' \("):
        score_suite(config, "gen")
    _write(preds / "part-1.jsonl", rows[1:], parquet=False)
    with pytest.raises(SystemRunError, match=r"no output for 1 of 60 golden id\(s\): 'e59'"):
        score_suite(config, "gen")


def test_missing_files_and_no_cluster_are_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    config = _project(tmp_path, monkeypatch, cluster)
    none = _configured(config, cluster, "goldens/nothing-*.jsonl")
    with pytest.raises(GoldenSetError, match=r"nothing-\*\.jsonl: no file matches"):
        score_suite(none, "gen")
    url = _configured(config, cluster, f"file://{tmp_path}/goldens/absent.jsonl")
    with pytest.raises(GoldenSetError, match=r"absent\.jsonl: golden set not found"):
        score_suite(url, "gen")
    yaml = _configured(config, cluster, "goldens/part-*.yaml")
    with pytest.raises(GoldenSetError, match=r"read on a Dask cluster is one of \.jsonl"):
        score_suite(yaml, "gen")
    preds = _configured(config, cluster, predictions=f"file://{tmp_path}/preds/gone-*.jsonl")
    with pytest.raises(InputError, match=r"gone-\*\.jsonl: no file matches"):
        score_suite(preds, "gen")
    here = _configured(config, None)
    with pytest.raises(UsageError, match=r"is a glob or a URL: .* set engine\.dask"):
        score_suite(here, "gen")
    for error in (GoldenSetError, InputError, UsageError):
        assert issubclass(error, GoldgateError) and error.exit_code == 2


# a dead worker is replaced by a fresh process that imports goldgate again: slow on a loaded
# machine, so these get more than the suite-wide 120 s before they count as a hang
@pytest.mark.timeout(360)
def test_a_worker_killed_mid_run_is_survived_or_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cluster: str
) -> None:
    make_project(tmp_path, 60, seed=9)
    monkeypatch.chdir(tmp_path)
    whole = tmp_path / "preds" / "gen.jsonl"
    rows = _rows(whole)
    rows[21]["outputs"] = [f"die:{tmp_path / 'marker'}", "x"]  # scored on a worker: it dies
    _write(whole, rows, parquet=False)
    goldens, predictions = _split(tmp_path, parquet=False)
    config = _configured(load_config(tmp_path / "goldgate.yaml"), cluster, goldens, predictions)
    suite = config.suites["gen"]
    metrics = {"tests.test_dask:dies_once": {}, "exact_match": {}}
    once = config.model_copy(
        update={"suites": {"gen": suite.model_copy(update={"metrics": metrics, "gate": {}})}}
    )
    on_dask = score_suite(once, "gen")  # a worker died; the scheduler ran the task again
    assert (tmp_path / "marker").exists()
    here = score_suite(_configured(once, None, "goldens/gen.jsonl", "preds/gen.jsonl"), "gen")
    assert on_dask.golden.content_hash == here.golden.content_hash
    assert on_dask.outputs == here.outputs
    for got, want in zip(on_dask.scores.metrics, here.scores.metrics, strict=True):
        assert as_float(got.stats).tobytes() == as_float(want.stats).tobytes()
    dies = once.model_copy(
        update={
            "suites": {
                "gen": suite.model_copy(
                    update={"metrics": {"tests.test_dask:always_dies": {}}, "gate": {}}
                )
            }
        }
    )
    with pytest.raises(DaskWorkerError, match="no score was computed"):
        score_suite(dies, "gen")


def times_out() -> None:
    raise TimeoutError("the store did not answer")


@pytest.mark.timeout(60)
def test_a_task_that_raises_timeout_error_is_that_error_not_a_longer_wait(cluster: str) -> None:
    future = client_for(cluster).submit(times_out, pure=False)
    with pytest.raises(TimeoutError, match="the store did not answer"):
        result_of(future, patience_s=1, what="reading")


def _patient(config: Config, seconds: float) -> Config:
    assert config.engine.dask is not None
    cluster = config.engine.dask.model_copy(update={"no_workers_timeout_s": seconds})
    return config.model_copy(update={"engine": config.engine.model_copy(update={"dask": cluster})})


def test_a_cluster_left_without_workers_is_a_clear_error_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every wait (chunks, partitions, a callable's calls) gives up on a workerless cluster."""
    make_project(tmp_path, 60, seed=11)
    monkeypatch.chdir(tmp_path)
    empty = distributed.LocalCluster(
        n_workers=0, processes=True, host="127.0.0.1", scheduler_port=0,
        dashboard_address="127.0.0.1:0",
    )  # fmt: skip
    address = str(empty.scheduler_address)
    try:
        target = DaskConfig(address=address, no_workers_timeout_s=1)
        length = FunctionMetric("length", dies_once, FunctionMetric.Options())
        with pytest.raises(DaskWorkerError, match=r"no workers for 1 s .*no score was computed"):
            parallel.score_arrays([("m", length)], ["a", "b"], [["a"], ["b"]], dask=target)

        goldens, predictions = _split(tmp_path, parquet=False)
        config = _configured(load_config(tmp_path / "goldgate.yaml"), address, goldens, predictions)
        with pytest.raises(DaskWorkerError, match=r"no workers for 1 s .*partition"):
            score_suite(_patient(config, 1), "gen")

        (tmp_path / "goldgate.yaml").write_text(CALLABLE_CONFIG.replace("4}", "4, timeout_s: 2}"))
        (tmp_path / "dasksys.py").write_text(SYSTEM)
        callable_config = _on(load_config(tmp_path / "goldgate.yaml"), address)
        with pytest.raises(DaskWorkerError, match=r"no workers to call the system for id"):
            score_suite(callable_config, "gen")
    finally:
        close_clients()
        empty.close()


def test_check_reads_a_glob_on_the_cluster_given_on_the_command_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    cluster: str,
) -> None:
    from goldgate.cli.main import main

    make_project(tmp_path, 60, seed=3)
    monkeypatch.chdir(tmp_path)
    _split(tmp_path, parquet=False)
    text = (tmp_path / "goldgate.yaml").read_text()
    (tmp_path / "goldgate.yaml").write_text(text.replace("goldens/gen.jsonl", "goldens/part-*"))
    assert main(["check"]) == 2
    assert "goldens/part-* is a glob or a URL" in _said(capsys)
    # no suffix to tell JSONL from Parquet: named, exit 2
    assert main(["check", "--dask", cluster]) == 2
    assert "read on a Dask cluster is one of .jsonl" in _said(capsys)
    (tmp_path / "goldgate.yaml").write_text(text.replace("goldens/gen.jsonl", "goldens/*.jsonl"))
    (tmp_path / "goldens" / "gen.jsonl").unlink()
    assert main(["check", "--dask", cluster]) == 0
    assert "60 examples" in _said(capsys)


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_each_golden_partition_receives_only_the_predictions_it_joins(cluster: str) -> None:
    from goldgate.execution.dask.data import _shuffle
    from goldgate.execution.dask.engine import client_for

    client = client_for(cluster)
    first = client.submit(list, [("a", 1, ["x"]), ("c", 2, ["y"])], pure=False)
    second = client.submit(list, [("b", 1, ["z"])], pure=False)
    goldens = [(["a", "b"], [1, 2]), (["c"], [1])]
    predictions = [(["a", "c"], [1, 2]), (["b"], [1])]
    pieces = _shuffle(client, [first, second], predictions, goldens)
    got = {
        golden: {source: f.result() for source, f in by.items()} for golden, by in pieces.items()
    }
    assert got == {
        0: {0: [("a", 1, ["x"])], 1: [("b", 1, ["z"])]},
        1: {0: [("c", 2, ["y"])]},
    }


# -- each partition bounded as a local input is (on the worker; no cluster needed) ------------


def _local_fs() -> Any:
    from fsspec.implementations.local import LocalFileSystem

    return LocalFileSystem()


@pytest.mark.parametrize("kind", ["jsonl", "parquet"])
def test_a_partition_that_is_not_a_regular_file_is_refused_not_read(
    tmp_path: Path, kind: str
) -> None:
    from goldgate.execution.dask import data as dask_data

    # Listed as a file, then replaced (or a store that says "file" for a device): the worker
    # opens it as every local input is opened.
    link = tmp_path / f"part-0.{kind}"
    link.symlink_to("/dev/zero")
    with pytest.raises(GoldenSetError, match=r"part-0\.\w+: golden set is a character device"):
        if kind == "jsonl":
            dask_data._jsonl_bytes(_local_fs(), str(link), str(link), GoldenSetError, "golden set")
        else:
            dask_data._parquet_rows(_local_fs(), str(link), str(link), GoldenSetError, "golden set")


@pytest.mark.parametrize("local", [True, False])
def test_a_partition_past_the_cap_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, local: bool
) -> None:
    from fsspec.implementations.memory import MemoryFileSystem

    from goldgate.execution.dask import data as dask_data
    from goldgate.io import inputs

    line = b'{"id": "a", "input": "q", "reference": "r"}\n'
    if local:
        fs, path = _local_fs(), str(tmp_path / "part-0.jsonl")
        Path(path).write_bytes(line * 10)
    else:
        fs, path = MemoryFileSystem(), f"/goldgate-cap-{os.getpid()}/part-0.jsonl"
        fs.pipe(path, line * 10)
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 100)
    monkeypatch.setattr(dask_data, "MAX_INPUT_BYTES", 100)
    try:
        with pytest.raises(InputError, match=r"part-0\.jsonl: .*larger than 100 bytes"):
            dask_data._jsonl_bytes(fs, path, path, InputError, "predictions file")
        monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 1000)
        monkeypatch.setattr(dask_data, "MAX_INPUT_BYTES", 1000)
        assert dask_data._jsonl_bytes(fs, path, path, InputError, "predictions file") == line * 10
    finally:
        if not local:
            fs.rm(path)
