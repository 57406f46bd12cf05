"""Large-set machinery at small sizes: multi-process runs equal one-process runs byte for byte."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from goldgate.execution import pool as parallel
from goldgate.model.config_loading import load_config
from goldgate.runner import bless, run
from tests.metrics.test_parallel import WORDS

CONFIG = """\
version: 1
system: {predictions: "preds/{suite}.jsonl", samples: 2}
suites:
  gen:
    goldens: goldens/gen.jsonl
    metrics: {bleu: {}, chrf: {}, rouge1: {}, rouge2: {}, rougeL: {use_stemmer: true},
              exact_match: {}, token_f1: {}}
    gate: {bleu: {max_drop: 0.5}, exact_match: {max_flips: 100}, chrf: {min: 1.0, slices: true}}
significance: {resamples: 200, seed: 3}
report: {dir: out, formats: [json]}
"""


def make_project(root: Path, n: int, seed: int = 0) -> None:
    """A suite of ``n`` generated examples with two samples of predictions per input."""
    rng = random.Random(seed)

    def text() -> str:
        return " ".join(rng.choices(WORDS, k=rng.randint(1, 12)))

    (root / "goldgate.yaml").write_text(CONFIG)
    (root / "goldens").mkdir()
    (root / "preds").mkdir()
    goldens, preds = [], []
    for i in range(n):
        refs = [text() for _ in range(rng.randint(1, 3))]
        tags = [rng.choice(["x", "y", "z"])]
        goldens.append({"id": f"e{i}", "input": text(), "references": refs, "tags": tags})
        outputs = [refs[0] if rng.random() < 0.3 else text() for _ in range(2)]
        preds.append({"id": f"e{i}", "outputs": outputs})
    _jsonl(root / "goldens" / "gen.jsonl", goldens)
    _jsonl(root / "preds" / "gen.jsonl", preds)


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows))


def _result_without_time(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text())
    document.pop("created_at")
    return document


def test_two_jobs_give_the_same_result_and_baseline_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path, 160)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(parallel, "DEFAULT_CHUNK_SIZE", 23)  # 160 = 6 × 23 + 22
    config = load_config(tmp_path / "goldgate.yaml")
    results, baselines = [], []
    for jobs in (1, 2):
        configured = config.model_copy(
            update={"engine": config.engine.model_copy(update={"jobs": jobs})}
        )
        bless(configured)
        baselines.append(configured.baseline.read_bytes())
        run(configured)
        results.append(_result_without_time(tmp_path / "out" / "result.json"))
    assert baselines[0] == baselines[1]
    assert results[0] == results[1]
    assert results[0]["suites"][0]["verdict"] == "pass"


def test_tiled_bootstrap_draws_the_same_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    """Large sets are resampled in tiles; the resamples and integer sums do not change."""
    import numpy as np

    from goldgate.gate import stats

    rng = np.random.default_rng(4)
    n = 230
    integers = rng.integers(0, 40, size=(n, 5)).astype(np.float64)
    fractions = rng.random(size=(n, 2))
    expected = np.vstack(
        [counts @ integers for counts in stats.resample_counts(n, resamples=70, seed=9)]
    )
    expected_f = np.vstack(
        [counts @ fractions for counts in stats.resample_counts(n, resamples=70, seed=9)]
    )
    monkeypatch.setattr(stats, "_TILED_ABOVE", 100)
    monkeypatch.setattr(stats, "_TILE", 37)  # 230 = 6 × 37 + 8
    monkeypatch.setattr(stats, "_PASS_ROWS", 9)  # 70 = 7 × 9 + 7
    got, got_f = stats.resampled_totals_many([integers, fractions], resamples=70, seed=9)
    assert got.tobytes() == expected.tobytes()
    assert np.allclose(got_f, expected_f, rtol=1e-12, atol=0)
