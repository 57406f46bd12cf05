"""Dask: a LocalCluster of two workers gives the result.json of a local run, byte for byte."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from goldgate.config import load_config
from goldgate.dask_engine import DaskWorkerError, close_clients
from goldgate.errors import SystemRunError
from goldgate.metrics import parallel
from goldgate.metrics.registry import FunctionMetric
from goldgate.runner import bless, run, score_suite
from tests.test_scale import make_project

distributed = pytest.importorskip("distributed")
dask = pytest.importorskip("dask")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """Two worker processes on loopback, ephemeral ports, no dashboard; its address."""
    # a task that killed one worker is retried once; killing a second is an error
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        local = distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,
        )
        try:
            yield str(local.scheduler_address)
        finally:
            close_clients()
            local.close()


def _on(config: Any, address: str | None) -> Any:
    from goldgate.config import DaskConfig

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

def answer(question):
    if question == "explode":
        raise ValueError("cannot answer that")
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
