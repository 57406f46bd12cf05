"""Time the history: ``goldgate history`` over 10,000 recorded runs, and what recording costs.

(a) A store holding 10,000 runs of 3 suites (2 metrics each, 50 per-example scores per
    metric, as ``goldgate run`` records them) is queried the ways ``goldgate history`` does:
    the library call ``load_history`` (last 10 runs per suite and metric, flaky examples
    included), and the installed command ``goldgate history --json`` in a fresh process
    (interpreter start and imports included), with ``--last 10`` and ``--last 0`` (all
    60,000 rows). Medians of ``--repeat`` runs.
(b) ``goldgate run`` on bench_gate.py's 10,000-example suite (7 metrics, paired bootstrap,
    three tag slices), as the installed command in fresh processes, with ``history: off`` and
    with the default history, alternated; the overhead is the ratio of the medians. The time
    of the recording step itself (``record_run``) is measured in-process too.

    python benchmarks/bench_history.py              # real data when ../shared/data exists
    python benchmarks/bench_history.py --quick      # 1,000 runs and 600 examples, one repeat
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_gate  # noqa: E402  (a sibling script: its corpus and project)

SUITES = ("translate", "summarize", "qa")
METRICS = ("bleu", "chrf")
EXAMPLES = 50

STORE_CONFIG = """\
version: 1
system: {predictions: "p/{suite}.jsonl"}
suites:
  translate: {goldens: g/translate.jsonl, metrics: {bleu: {}, chrf: {}}}
  summarize: {goldens: g/summarize.jsonl, metrics: {bleu: {}, chrf: {}}}
  qa: {goldens: g/qa.jsonl, metrics: {bleu: {}, chrf: {}}}
"""


def fill_store(directory: Path, runs: int) -> float:
    """Append ``runs`` runs through the store's own ``append``; returns the seconds taken."""
    import random

    from goldgate.history.store import MetricRecord, RunRecord, SuiteRecord, open_store

    (directory / "goldgate.yaml").write_text(STORE_CONFIG)
    rng = random.Random(0)
    ids = tuple(f"ex-{i}" for i in range(EXAMPLES))
    digests = tuple(f"{i:016x}" for i in range(EXAMPLES))
    store, _ = open_store(directory / ".goldgate" / "history.sqlite")
    begin = time.perf_counter()
    with store:
        for index in range(runs):
            metrics = []
            for suite in SUITES:
                for metric in METRICS:
                    score = 60 + rng.gauss(0, 1)
                    metrics.append(
                        MetricRecord(
                            suite,
                            metric,
                            "sig",
                            score,
                            score - 1,
                            score + 1,
                            60.0,
                            "pass",
                            tuple(float(rng.random() < 0.6) * 100 for _ in ids),
                        )
                    )
            store.append(
                RunRecord(
                    created_at=f"2026-{1 + index // 900 % 12:02d}-01T00:00:00+00:00",
                    verdict="pass",
                    goldgate_version="bench",
                    commit=f"{index:040x}",
                    branch="main",
                    message=f"commit {index}",
                    suites=tuple(SuiteRecord(s, "pass", ids, digests) for s in SUITES),
                    metrics=tuple(metrics),
                )
            )
    return time.perf_counter() - begin


def query_library(directory: Path, repeat: int) -> float:
    from goldgate.history.query import load_history
    from goldgate.model.config_loading import load_config

    config = load_config(directory)
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        view = load_history(config, last=10)
        times.append(time.perf_counter() - begin)
        assert len(view.rows) == 10 * len(SUITES) * len(METRICS), len(view.rows)
    return statistics.median(times)


def timed_command(directory: Path, *args: str) -> tuple[float, float, bytes, int]:
    """Run the installed command: wall seconds, CPU seconds (user + system), stdout, code.

    CPU time is reported beside wall time because on a shared machine the wall clock
    mostly measures the other processes.
    """
    script = Path(sys.executable).parent / "goldgate"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "goldgate.cli.main"]
    begin = time.perf_counter()
    process = subprocess.Popen(
        [*argv, *args], cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    out = process.stdout.read()  # to the end, then reap the child ourselves for its rusage
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - begin
    return wall, usage.ru_utime + usage.ru_stime, out, process.returncode


def query_cli(directory: Path, repeat: int, last: int) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu, out, code = timed_command(directory, "history", "--json", "--last", str(last))
        assert code == 0
        json.loads(out)
        walls.append(wall)
        cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def run_cli(directory: Path) -> tuple[float, float]:
    wall, cpu, _, code = timed_command(directory, "run", "-q")
    if code not in (0, 1):
        raise SystemExit("goldgate run failed")
    return wall, cpu


def record_cost(directory: Path) -> tuple[float, float]:
    """In-process: run() without recording, then record_run alone; seconds of each."""
    from goldgate.history.recording import record_run
    from goldgate.model.config_loading import load_config
    from goldgate.runner import run

    config = load_config(directory)
    begin = time.perf_counter()
    result = run(config, history_source=None)
    ran = time.perf_counter() - begin
    begin = time.perf_counter()
    warnings = record_run(result, config)
    recorded = time.perf_counter() - begin
    assert not warnings, warnings
    return ran, recorded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=bench_gate.DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 1_000 if args.quick else 10_000
    size = 600 if args.quick else bench_gate.SIZE
    repeat = 1 if args.quick else args.repeat

    with tempfile.TemporaryDirectory(prefix="gg-bench-history-") as tmp:
        store_dir = Path(tmp) / "store"
        store_dir.mkdir()
        filled = fill_store(store_dir, runs)
        size_mb = (store_dir / ".goldgate" / "history.sqlite").stat().st_size / 2**20
        print(f"(a) store of {runs:,} runs x {len(SUITES)} suites x {len(METRICS)} metrics")
        print(
            f"    filled through append() in {filled:.1f} s ({filled / runs * 1000:.2f} ms a run);"
        )
        print(f"    {size_mb:.1f} MiB")
        print(
            f"    load_history (last 10, flaky examples): {query_library(store_dir, repeat):.3f} s"
        )
        for last, label in ((10, "--last 10"), (0, "--last 0, all rows")):
            wall, cpu = query_cli(store_dir, repeat, last)
            print(
                f"    goldgate history --json ({label}), fresh process:"
                f" {wall:.3f} s wall, {cpu:.3f} s CPU"
            )

        project = Path(tmp) / "project"
        project.mkdir()
        examples = None if args.quick else bench_gate.real_examples(args.data)
        source = "real data" if examples is not None else "generated"
        examples = examples or bench_gate.generated_examples(size)
        bench_gate.build_project(project, examples[:size], 1000)
        predictions = project / "predictions"
        predictions.mkdir()
        (predictions / "bench.jsonl").write_bytes((project / "blessed.jsonl").read_bytes())
        subprocess.run(
            [sys.executable, "-m", "goldgate.cli.main", "bless", "-q"],
            cwd=project,
            check=True,
            capture_output=True,
        )
        (predictions / "bench.jsonl").write_bytes((project / "current.jsonl").read_bytes())
        config = project / "goldgate.yaml"
        on_text = config.read_text()
        off_text = on_text + "history: off\n"
        off_times: list[tuple[float, float]] = []
        on_times: list[tuple[float, float]] = []
        for _ in range(repeat):
            config.write_text(off_text)
            off_times.append(run_cli(project))
            config.write_text(on_text)
            on_times.append(run_cli(project))
        ran, recorded = record_cost(project)
        print(f"(b) goldgate run, {size:,} examples ({source}), median of {repeat}:")
        for index, kind in ((0, "wall"), (1, "CPU")):
            off = statistics.median(t[index] for t in off_times)
            on = statistics.median(t[index] for t in on_times)
            print(
                f"    {kind}: history off {off:.2f} s, history on {on:.2f} s:"
                f" {100 * (on / off - 1):+.1f} %"
            )
        print(
            f"    in-process: run() {ran:.2f} s, record_run() {recorded:.3f} s"
            f" ({100 * recorded / ran:.1f} % of the run)"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("GOLDGATE_NO_PROGRESS", "1")
    sys.exit(main())
