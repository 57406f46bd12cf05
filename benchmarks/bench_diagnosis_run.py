"""What the regression diagnosis adds to ``goldgate run``: time and peak memory, with and
without it, on a large synthetic QA suite (issue 32's budget: at most 15 % of the run's
time and 100 MB of its peak memory at 1,000,000 examples).

The project is bench_scale's (short QA-like records, BLEU, chrF, ROUGE, exact match and
token F1 gated, a paired bootstrap; 5 % of the outputs changed since the bless, so thousands
of examples regressed and the unexplained ones are clustered). After one bless, these runs are
made as fresh processes, in this order:

  off     ``diagnose: off``: the run as it was before the diagnosis
  cold    the diagnosis on, nothing cached: both sides diagnosed
  warm    the diagnosis on again: the blessed side's masks come from the cache
          (suites of 5,000 examples or more), only today's outputs are diagnosed

and each ``off``/``cold``/``warm`` is repeated ``--repeat`` times (the fastest kept). The
figures depend on the detectors installed: with only ``empty`` the added cost is a lower
bound of what the ten built-in detectors cost.

    python benchmarks/bench_diagnosis_run.py                 # 1,000,000 examples
    python benchmarks/bench_diagnosis_run.py --n 20000 --repeat 1
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import generate, measure

#: issue 32's budget at a million examples
TIME_BUDGET = 0.15
MEMORY_BUDGET_MB = 100.0


def _configure(directory: Path, diagnose: bool) -> None:
    path = directory / "goldgate.yaml"
    text = path.read_text().replace("diagnose: off\n", "")
    path.write_text(text if diagnose else text + "diagnose: off\n")


def _run(directory: Path, jobs: int) -> tuple[float, float, float]:
    seconds, peak, code, cpu = measure(directory, ["run", "-q", "--jobs", str(jobs)])
    if code not in (0, 1):
        raise SystemExit(f"goldgate run exited {code}")
    return seconds, cpu, peak


def bench(n: int, repeat: int, jobs: int, resamples: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"goldgate-diagnosis-{n}-") as name:
        directory = Path(name)
        generate(directory, n, "json", resamples)
        _configure(directory, False)
        code = measure(directory, ["bless", "-q", "--jobs", str(jobs)])[2]
        if code != 0:
            raise SystemExit(f"goldgate bless exited {code}")
        (directory / "predictions.jsonl").unlink()
        (directory / "changed.jsonl").rename(directory / "predictions.jsonl")
        best: dict[str, tuple[float, float, float]] = {}
        for _ in range(repeat):
            cache = directory / ".goldgate" / "diagnosis"
            for label in ("off", "cold", "warm"):
                _configure(directory, label != "off")
                if label == "cold":
                    for stale in cache.glob("*.npy") if cache.exists() else []:
                        stale.unlink()
                figures = _run(directory, jobs)
                print(
                    json.dumps(
                        {
                            "n": n,
                            "run": label,
                            "seconds": figures[0],
                            "cpu_seconds": figures[1],
                            "peak_mib": figures[2],
                        }
                    ),
                    file=sys.stderr,
                    flush=True,
                )
                if label not in best or figures[0] < best[label][0]:
                    best[label] = figures
        result = json.loads((directory / "report" / "result.json").read_text())
        detectors = result["suites"][0]["diagnosis"]["detectors"]
    off = best["off"]
    report: dict[str, object] = {"n": n, "jobs": jobs, "detectors": detectors}
    for label in ("cold", "warm"):
        seconds, cpu, peak = best[label]
        report[label] = {
            "seconds": round(seconds, 2),
            "added_time_pct": round(100 * (seconds / off[0] - 1), 1),
            "added_cpu_pct": round(100 * (cpu / off[1] - 1), 1) if off[1] else None,
            "peak_mib": round(peak, 1),
            "added_peak_mib": round(peak - off[2], 1),
        }
    report["off"] = {
        "seconds": round(off[0], 2),
        "cpu_seconds": round(off[1], 2),
        "peak_mib": round(off[2], 1),
    }
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="examples (default 1M)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each kind (fastest kept)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()
    report = bench(args.n, args.repeat, args.jobs, args.resamples)
    print(json.dumps(report, indent=2))
    warm = report["warm"]
    assert isinstance(warm, dict)
    within = warm["added_time_pct"] <= 100 * TIME_BUDGET and (
        warm["added_peak_mib"] <= MEMORY_BUDGET_MB
    )
    print(
        f"diagnosis adds {warm['added_time_pct']} % time, {warm['added_peak_mib']} MiB peak"
        f" (warm cache; budget {100 * TIME_BUDGET:.0f} %, {MEMORY_BUDGET_MB:.0f} MB):"
        f" {'within' if within else 'OVER'} budget"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
