"""The execution backends behind one seam: the registry picks one from ``engine``, the local
ones agree value for value, and the pipeline does all its work through the one it is given."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import pytest

from goldgate.execution import pool as parallel
from goldgate.execution import registry
from goldgate.execution.backend import Backend, CallableWork, SuiteScoring
from goldgate.execution.dask.backend import DaskBackend
from goldgate.execution.local import InProcessBackend, PoolBackend
from goldgate.model.compact_stats import as_float
from goldgate.model.config import Config, DaskConfig, EngineConfig
from goldgate.model.config_loading import load_config
from goldgate.model.goldens import GoldenSet
from goldgate.pipeline.score import ScoredSuite, score_suite
from tests.test_scale import make_project

if TYPE_CHECKING:
    from goldgate.execution.backend import CallT, Chunk, FloatArray, MetricPairs
    from goldgate.terminal.progress import ProgressReporter

T = TypeVar("T")

# Each backend is what the pipeline asks for (checked by mypy where it type-checks tests).
_BACKENDS: tuple[Backend, ...] = (
    InProcessBackend(),
    PoolBackend(jobs=2),
    DaskBackend(dask=DaskConfig(address="local")),
)


@pytest.mark.parametrize(
    ("engine", "kind", "cls"),
    [
        ({"jobs": 1}, "in-process", InProcessBackend),
        ({"jobs": 2}, "pool", PoolBackend),
        ({}, "pool", PoolBackend),  # jobs unset: a pool of every core on a large corpus
        ({"dask": {"address": "local"}}, "dask", DaskBackend),
        ({"jobs": 1, "dask": {"address": "tcp://h:8786"}}, "dask", DaskBackend),
    ],
)
def test_the_registry_picks_the_backend_the_engine_asks_for(
    engine: dict[str, Any], kind: str, cls: type
) -> None:
    config = EngineConfig.model_validate(engine)
    assert registry.backend_kind(jobs=config.jobs, dask=config.dask) == kind
    backend = registry.backend_for(config)
    assert type(backend) is cls
    if isinstance(backend, PoolBackend):
        assert backend.jobs == config.jobs
    if isinstance(backend, DaskBackend):
        assert backend.cluster == config.dask


def _with_engine(config: Config, **engine: Any) -> Config:
    return config.model_copy(update={"engine": config.engine.model_copy(update=engine)})


def _stats(scored: ScoredSuite) -> dict[str, list[Any]]:
    return {m.spec: as_float(m.stats).tolist() for m in scored.scores.metrics}


def test_in_process_and_pool_backends_give_identical_statistics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path, 90, seed=5)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(parallel, "DEFAULT_CHUNK_SIZE", 13)  # several chunks per worker
    config = load_config(tmp_path / "goldgate.yaml")
    here = score_suite(_with_engine(config, jobs=1), "gen")
    pooled = score_suite(_with_engine(config, jobs=2), "gen")
    assert _stats(here) == _stats(pooled)
    assert here.outputs == pooled.outputs
    # and chunk by chunk, straight from the backends
    pairs = list(config.suites["gen"].create_metrics().items())
    chunks = [(["a b", "c"], [["a b"], ["d"]]), (["e f g"], [["e f"]])]
    parts = [list(backend.score_chunks(pairs, chunks, 3)) for backend in _BACKENDS[:2]]
    for left, right in zip(*parts, strict=True):
        for a, b in zip(left, right, strict=True):
            np.testing.assert_array_equal(a, b)


class FakeBackend:
    """Runs everything here, as the in-process backend does, and notes what it was asked."""

    asked: ClassVar[list[str]] = []

    def __init__(self, *, jobs: int | None = None, dask: DaskConfig | str | None = None) -> None:
        self.local = InProcessBackend()

    def score_chunks(
        self, pairs: MetricPairs, chunks: Iterable[Chunk], total: int | None
    ) -> Iterable[list[FloatArray]]:
        FakeBackend.asked.append("score_chunks")
        return self.local.score_chunks(pairs, chunks, total)

    def run_calls(self, work: CallableWork[CallT]) -> None:
        FakeBackend.asked.append("run_calls")
        self.local.run_calls(work)

    def read_goldens(self, config: Config, name: str) -> GoldenSet:
        FakeBackend.asked.append("read_goldens")
        return self.local.read_goldens(config, name)

    def partitioned(self, config: Config, name: str) -> bool:
        FakeBackend.asked.append("partitioned")
        return False

    def score_partitioned(
        self,
        config: Config,
        name: str,
        scoring: SuiteScoring[T],
        progress: ProgressReporter | None,
    ) -> T:
        raise AssertionError("partitioned() said no")


CALLABLE_SYSTEM = "def answer(text):\n    return text.upper()\n"


def test_a_backend_registered_for_dask_is_the_one_the_pipeline_uses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under ``engine.dask`` the pipeline reads, calls and scores only through the registered
    class: no Dask is involved, so no other path is taken behind the backend's back."""
    make_project(tmp_path, 40, seed=6)
    (tmp_path / "callsys.py").write_text(CALLABLE_SYSTEM)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry.BACKENDS, "dask", f"{__name__}:FakeBackend")
    monkeypatch.setattr(FakeBackend, "asked", [])
    config = load_config(tmp_path / "goldgate.yaml")
    expected = score_suite(_with_engine(config, jobs=1), "gen")
    on_fake = _with_engine(config, jobs=1, dask=DaskConfig(address="tcp://nowhere:1"))
    got = score_suite(on_fake, "gen")
    assert FakeBackend.asked == ["partitioned", "read_goldens", "score_chunks", "score_chunks"]
    assert _stats(got) == _stats(expected)

    FakeBackend.asked.clear()
    system = type(config.system_for("gen")).model_validate(
        {"callable": "callsys:answer", "cache": "off"}
    )
    calling = on_fake.model_copy(update={"system": system})
    scored = score_suite(calling, "gen")
    assert FakeBackend.asked == ["partitioned", "read_goldens", "run_calls", "score_chunks"]
    assert scored.outputs and all(o == o.upper() for outs in scored.outputs.values() for o in outs)
