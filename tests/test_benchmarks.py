"""The benchmark script runs end to end on a tiny generated corpus (it times nothing here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_metrics.py"


#: The run took 26 s on the 2 shared cores at load 3.5, most of it the peers (METEOR's,
#: ROUGE's): the suite's 120 s timeout (and the 120 s this test gave the script) left a
#: loaded machine under 5× of headroom, for a test that measures nothing. A limit only for
#: a hang.
_HANG_S = 900


@pytest.mark.slow
@pytest.mark.timeout(_HANG_S + 60)
def test_bench_metrics_quick_runs_and_scores_agree() -> None:
    """``--quick`` runs every group; its exit code says goldgate and each peer agree (it
    checks no speed floor: timings on a loaded machine mean nothing)."""
    for peer in ("sacrebleu", "rouge_score"):
        pytest.importorskip(peer)
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        check=False,
        timeout=_HANG_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    wordnet = BENCH.parents[1] / ".ci" / "nltk_data" / "corpora" / "wordnet" / "data.noun"
    for label in "abcdef" if wordnet.is_file() else "abcde":
        assert any(line.startswith(f"({label}) ") for line in lines), done.stdout
    assert "DISAGREE" not in done.stdout
    assert "floors not checked" in done.stdout


DIAGNOSIS = BENCH.parent / "bench_diagnosis_accuracy.py"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("where", ["available", "--no-shared"])
def test_bench_diagnosis_accuracy_quick_holds_the_floors(where: str) -> None:
    """``--quick`` prints the labelled set's table, overall and per language, and a
    throughput; exit 0 = every mode at the test's precision and recall floors. With
    ``--no-shared`` (as on a user's clone) it scores the own sentences alone."""
    extra = [where] if where.startswith("--") else []
    done = subprocess.run(
        [sys.executable, str(DIAGNOSIS), "--quick", *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=110,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(a) labelled set" in done.stdout and "all (detect_side)" in done.stdout
    assert "BELOW FLOOR" not in done.stdout
    counts = next(line for line in done.stdout.splitlines() if "rows per language" in line)
    for lang in ("fr", "es", "ru", "ja"):
        assert f" {lang} " in counts
    if extra:
        assert "own sentences only" in done.stdout and " en " not in counts
