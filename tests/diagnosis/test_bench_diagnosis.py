"""The diagnosis benchmark runs end to end on a small set (it checks no speed: timings on a
loaded machine mean nothing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_diagnosis_run.py"


def test_bench_diagnosis_run_reports_the_added_cost() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--n", "2000", "--repeat", "1", "--resamples", "20"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout[: done.stdout.rindex("}") + 1])
    assert report["n"] == 2000 and report["detectors"]["empty"] == 1
    for label in ("fresh", "cold", "warm"):
        assert {"added_time_pct", "added_peak_mib"} <= set(report[label])
    assert "bless_added_time_pct" in report
    assert report["stage"]["fresh"]["stage_seconds"] > 0
    assert "budget" in done.stdout.splitlines()[-1]
