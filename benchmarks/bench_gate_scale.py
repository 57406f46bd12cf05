"""The gate alone at scale: ``evaluate_suite`` on generated per-example statistics.

No texts and no metric scoring: a suite of ``--examples`` examples (BLEU, chrF, ROUGE-1/2/L,
exact match and token F1 statistics drawn at random, the ROUGE and F1 ones fractional), four
tags, every example in a baseline of the same shape, ``max_drop`` on every metric with tag
slices, and a paired bootstrap of ``--resamples`` resamples: per-example scores, five
bootstraps (the suite and four slices), flips and checks. Each ``--jobs`` value runs in a
fresh process; it prints the CPU and wall time of ``evaluate_suite`` and the CPU time of its
bootstraps alone (``compare_many``), the peak RSS it added (sampled every 5 ms), and a digest
of every summary, slice and check, which must not depend on ``--jobs``. ``--changed F``
blesses the current statistics with a share ``F`` of the examples drawn anew, as in a run
whose outputs mostly held (by default the two sides are drawn apart). ``--unpaired K``
leaves K examples spread over the suite unpaired, as in a run after K golden records were edited.

    python benchmarks/bench_gate_scale.py --examples 1000000 --jobs 1 2
    python benchmarks/bench_gate_scale.py --examples 1000000 --jobs 1 --changed 0.05
    python benchmarks/bench_gate_scale.py --examples 1000000 --jobs 2 --changed 0.05 --unpaired 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

SPECS = ("bleu", "chrf", "rouge1", "rouge2", "rougeL", "exact_match", "token_f1")
TAGS = ("history", "geography", "science", "sport")


@dataclass(frozen=True)
class _Rule:
    min: float | None = None
    max: float | None = None
    max_drop: float | None = 1.0
    max_drop_rel: float | None = None
    max_flips: int | None = None
    slices: bool = True


@dataclass(frozen=True)
class _Significance:
    resamples: int
    alpha: float = 0.05
    seed: int = 0


def _statistics(spec: str, n: int, rng: Any) -> Any:
    import numpy as np

    if spec == "bleu":
        hyp, ref = rng.integers(1, 9, n), rng.integers(1, 9, n)
        total = [np.maximum(hyp - i, 0) for i in range(4)]
        correct = [np.minimum(rng.integers(0, 9, n), t) for t in total]
        return np.column_stack([hyp, ref, *correct, *total]).astype(np.float64)
    if spec == "chrf":
        columns = []
        for _ in range(6):
            hyp, ref = rng.integers(0, 30, n), rng.integers(0, 30, n)
            columns += [hyp, ref, np.minimum(hyp, ref) // 2]
        return np.column_stack(columns).astype(np.float64)
    if spec.startswith("rouge"):
        precision, recall = rng.random(n), rng.random(n)
        f = 2 * precision * recall / np.maximum(precision + recall, 1e-9)
        return np.column_stack([precision, recall, f, np.ones(n)])
    if spec == "exact_match":
        return np.column_stack([rng.integers(0, 2, n), np.ones(n)]).astype(np.float64)
    return np.column_stack([rng.random(n), np.ones(n)])


class _Baseline:
    """What ``evaluate_suite`` reads of a baseline: every example, these statistics (compact,
    as a packed baseline decodes them)."""

    def __init__(self, stats: dict[str, Any]) -> None:
        self.metrics = dict.fromkeys(stats)
        self._stats = stats

    def positions_of(self, ids: Any) -> Any:
        import numpy as np

        return np.arange(len(ids), dtype=np.intp)

    def compact_stats(self, spec: str, ids: Any, *, at: Any) -> Any:
        stats = self._stats[spec]
        if len(ids) == stats.n:
            return stats
        return stats.take(at, view=stats.samples == 1)  # as a packed baseline gives a subset


def _rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _blessed(current: Any, fresh: Any, changed: float | None, rng: Any) -> Any:
    """The baseline's statistics: ``fresh``, or ``current`` with a share ``changed`` of its
    examples taken from ``fresh``."""
    if changed is None:
        return fresh
    rows = rng.random(len(current)) < changed
    mixed = current.copy()
    mixed[rows] = fresh[rows]
    return mixed


def child(
    n: int, resamples: int, jobs: int, changed: float | None, unpaired: int
) -> dict[str, Any]:
    import numpy as np

    from goldgate.gate import rules as gate
    from goldgate.gate.rules import MetricScores, SuiteScores, evaluate_suite
    from goldgate.metrics.registry import create_metric
    from goldgate.model.compact_stats import CompactStats

    rng = np.random.default_rng(1)
    metrics = {spec: create_metric(spec) for spec in SPECS}
    # Compact on both sides, as a run holds them: scored statistics and a packed baseline's.
    drawn = {spec: _statistics(spec, n, rng) for spec in SPECS}
    fresh = {spec: _statistics(spec, n, rng) for spec in SPECS}
    current = {spec: CompactStats.of(drawn[spec][np.newaxis]) for spec in SPECS}
    blessed = {
        spec: CompactStats.of(_blessed(drawn[spec], fresh[spec], changed, rng)[np.newaxis])
        for spec in SPECS
    }
    del drawn, fresh
    tags = tuple((TAGS[i],) for i in rng.integers(0, len(TAGS), n).tolist())
    suite = SuiteScores(
        "qa",
        tuple(f"q{i:07d}" for i in range(n)),
        tags,
        tuple(MetricScores(s, metrics[s], "sig", current[s]) for s in SPECS),
    )
    # examples spread over the suite, as if their golden records had been edited
    step = max(1, n // unpaired) if unpaired else 0
    edited = frozenset(suite.ids[step // 2 :: step][:unpaired]) if unpaired else frozenset()
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.005)

    # The bootstraps' own share: CPU seconds of the threads inside compare_many (NumPy's
    # draws and BLAS's products run in the calling thread, with one BLAS thread).
    bootstrap = [0.0]
    compare_many = gate.compare_many

    def timed_compare_many(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return compare_many(*args, **kwargs)
        finally:
            bootstrap[0] += time.thread_time() - start

    gate.compare_many = timed_compare_many  # type: ignore[assignment]
    before = _rss()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu, wall = time.process_time(), time.perf_counter()
    evaluation = evaluate_suite(
        suite,
        _Baseline(blessed),  # type: ignore[arg-type]
        dict.fromkeys(SPECS, _Rule()),
        _Significance(resamples),
        jobs=jobs,
        unpaired=edited,
    )
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    done.set()
    sampler.join()
    figures = [
        [m.model_dump(mode="json") for m in evaluation.metrics],
        [s.model_dump(mode="json") for s in evaluation.slices],
        [c.model_dump(mode="json") for c in evaluation.checks],
        {s: hashlib.sha256(v.tobytes()).hexdigest() for s, v in evaluation.scores.items()},
    ]
    digest = hashlib.sha256(json.dumps(figures, sort_keys=True).encode()).hexdigest()[:16]
    return {
        "examples": n,
        "resamples": resamples,
        "jobs": jobs,
        "unpaired": len(edited),
        "cpu_s": round(cpu, 2),
        "bootstrap_cpu_s": round(bootstrap[0], 2),
        "wall_s": round(wall, 2),
        "peak_added_mib": round((peak[0] - before) / 2**20),
        "digest": digest,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--changed", type=float, default=None, metavar="SHARE")
    parser.add_argument("--unpaired", type=int, default=0, metavar="K")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(
            json.dumps(
                child(args.examples, args.resamples, args.jobs[0], args.changed, args.unpaired)
            )
        )
        return 0
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}  # as the CLI loads NumPy
    digests = set()
    for jobs in args.jobs:
        command = [sys.executable, __file__, "--child", "--examples", str(args.examples)]
        command += ["--resamples", str(args.resamples), "--jobs", str(jobs)]
        if args.changed is not None:
            command += ["--changed", str(args.changed)]
        command += ["--unpaired", str(args.unpaired)]
        done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0:  # the child's traceback, not only its exit status
            sys.stderr.write(done.stderr)
            return done.returncode
        figures = json.loads(done.stdout)
        digests.add(figures["digest"])
        print(
            f"{figures['examples']:>9,} examples, {figures['resamples']} resamples, --jobs"
            f" {jobs}, {figures['unpaired']} unpaired: {figures['cpu_s']:.2f} s CPU"
            f" ({figures['bootstrap_cpu_s']:.2f} s in the bootstraps),"
            f" {figures['wall_s']:.2f} s wall,"
            f" +{figures['peak_added_mib']} MiB peak RSS, digest {figures['digest']}"
        )
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if len(digests) > 1:
        print("DIGESTS DIFFER between --jobs values")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
