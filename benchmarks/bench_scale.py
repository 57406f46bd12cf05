"""How goldgate scales: time, peak memory and file sizes from 10,000 to 1,000,000 examples.

For each size a project is generated (short QA-like records: a question, one to three
references, a tag; predictions 70 % right), gated with BLEU, chrF, ROUGE-1/2/L, exact match
and token F1 and a paired bootstrap of 1,000 resamples, and these commands are run as fresh
processes, each with ``--jobs 1`` and ``--jobs 2``:

  check          validate config, goldens and baseline (run once, no scoring); the golden
                 set file has the blessed bytes, so its records are not read
  check*         the same after a blank line is appended to the golden set: the same
                 records in other bytes, found so by the baseline's index of the file
                 (only the piece that changed is read)
  check+         the same after one record's references are also edited in the middle of the
                 file: another set, every record read, hashed and compared with the baseline
  run            the first run, no baseline yet
  bless          write the baseline
  run+baseline   a run against that baseline, with 5 % of the outputs changed
  run+edited     the same with one golden record's references edited (the golden set
                 changed: gated on the examples both sides share)

With ``--jobs 1`` the run against the baseline is run once more in a process that times
the CPU of its scoring (``score_chunks_compact``: texts cut into chunks, tokenised and
counted) and of its paired bootstraps (``compare_many``: the suite and its tag slices), each
in the thread that does it, and prints the bootstraps' share of the metrics' time.

Printed per command: wall seconds, CPU seconds (user + system, pool workers included: on a
shared machine the steadier figure), peak memory (the whole process tree, sampled every
20 ms from /proc, so a pool's workers count) and the files written (result.json, the report
directory, the baseline and its bytes per example); then the slopes between sizes (time
and memory per example), which say what a bigger set costs.

    python benchmarks/bench_scale.py                      # 10k, 100k, 1M
    python benchmarks/bench_scale.py --sizes 10000 100000 --jobs 1 2
    python benchmarks/bench_scale.py --sizes 1000000 --jobs 1 --share-only
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

CONFIG = """\
version: 1
system: {{predictions: "predictions.jsonl"}}
suites:
  qa:
    goldens: goldens.jsonl
    metrics: {{bleu: {{}}, chrf: {{}}, rouge1: {{}}, rouge2: {{}}, rougeL: {{}},
               exact_match: {{}}, token_f1: {{}}}}
    gate:
      bleu: {{max_drop: 1.0}}
      chrf: {{max_drop: 1.0}}
      rougeL: {{max_drop: 1.0, slices: true}}
      exact_match: {{max_drop: 1.0, max_flips: {flips}}}
      token_f1: {{max_drop: 1.0}}
significance: {{method: paired_bootstrap, resamples: {resamples}, alpha: 0.05, seed: 0}}
report: {{dir: report, formats: [{formats}]}}
"""

WORDS = [
    "the",
    "a",
    "of",
    "to",
    "in",
    "and",
    "city",
    "river",
    "year",
    "people",
    "who",
    "what",
    "when",
    "where",
    "which",
    "how",
    "many",
    "first",
    "last",
    "team",
    "war",
    "king",
    "queen",
    "born",
    "died",
    "capital",
    "country",
    "president",
    "university",
    "company",
    "1066",
    "1914",
    "1945",
    "2001",
    "three",
    "seven",
    "million",
    "percent",
    "north",
    "south",
    "east",
    "west",
    "new",
    "old",
]


def generate(directory: Path, size: int, formats: str, resamples: int) -> None:
    """goldens.jsonl, predictions.jsonl (blessed) and changed.jsonl (5 % differ), seeded."""
    rng = random.Random(size)
    (directory / "goldgate.yaml").write_text(
        CONFIG.format(flips=size, resamples=resamples, formats=formats)
    )
    tags = ["history", "geography", "science", "sport"]
    with (
        (directory / "goldens.jsonl").open("w") as goldens,
        (directory / "predictions.jsonl").open("w") as blessed,
        (directory / "changed.jsonl").open("w") as changed,
    ):
        for index in range(size):
            answer = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
            refs = [answer] + [
                " ".join(rng.choices(WORDS, k=rng.randint(1, 6))) for _ in range(rng.randint(0, 2))
            ]
            question = " ".join(rng.choices(WORDS, k=rng.randint(6, 14))) + " ?"
            example_id = f"q{index:07d}"
            record = {"id": example_id, "input": question, "references": refs}
            record["tags"] = [tags[index % 4]]
            goldens.write(json.dumps(record) + "\n")
            output = answer if rng.random() < 0.7 else " ".join(rng.choices(WORDS, k=3))
            blessed.write(json.dumps({"id": example_id, "output": output}) + "\n")
            if rng.random() < 0.05:
                output = " ".join(rng.choices(WORDS, k=2))
            changed.write(json.dumps({"id": example_id, "output": output}) + "\n")


def _tree_rss(pid: int, cpu: dict[int, float] | None = None) -> int:
    """Resident bytes of a process and all its descendants; their CPU seconds into ``cpu``.

    A child still running goldgate's own command line is a fork about to exec (``git``, a
    system command) that shares goldgate's pages: counting it would double the peak.
    """
    total, stack = 0, [pid]
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            own = handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    while stack:
        current = stack.pop()
        try:
            if current != pid:
                with open(f"/proc/{current}/cmdline", "rb") as handle:
                    if handle.read() == own:
                        continue
            with open(f"/proc/{current}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            if cpu is not None:
                with open(f"/proc/{current}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                # utime and stime (fields 14 and 15), in clock ticks
                ticks = int(fields[11]) + int(fields[12])
                cpu[current] = ticks / os.sysconf("SC_CLK_TCK")
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack += [int(child) for child in handle.read().split()]
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return total


def measure(directory: Path, argv: list[str]) -> tuple[float, float, int, float]:
    """Run ``goldgate ARGV`` in ``directory``: wall seconds, peak tree MiB, exit code, CPU s."""
    script = Path(sys.executable).parent / "goldgate"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "goldgate.cli.main"]
    begin = time.perf_counter()
    process = subprocess.Popen(
        [*command, *argv], cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    peak = 0
    done = threading.Event()
    # CPU seconds per process of the tree, as last seen: a pool's workers are children of
    # a fork server that goldgate does not wait for, so wait4's usage would miss them
    cpu: dict[int, float] = {}

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(process.pid, cpu), _high_water(process.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - begin
    done.set()
    sampler.join()
    assert process.stderr is not None
    errors = process.stderr.read().decode("utf-8", "replace")
    code = os.waitstatus_to_exitcode(status)
    _exit_ok(argv, code, errors)
    # The main process's exact CPU time replaces the sampled one, the workers' are as last
    # sampled. Its peak is its own high-water mark as last sampled (a short peak between
    # samples still counts), not wait4's ru_maxrss: that starts from the resident size of
    # this benchmark when it forked the child (700 MiB after generating 1M examples).
    cpu[process.pid] = usage.ru_utime + usage.ru_stime
    return seconds, peak / 2**20, code, sum(cpu.values())


def _exit_ok(argv: list[str], code: int, errors: str) -> None:
    """Stop the benchmark, showing goldgate's stderr, unless it passed (0) or gated (1)."""
    if code not in (0, 1):
        sys.stderr.write(errors)
        raise SystemExit(f"goldgate {' '.join(argv)} failed with exit code {code}")


def measure_share(directory: Path, argv: list[str]) -> dict[str, float]:
    """CPU seconds of scoring and of the bootstraps in ``goldgate ARGV`` (see share_child)."""
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--share-child", *argv],
        cwd=directory,
        capture_output=True,
        text=True,
        check=False,
    )
    _exit_ok(argv, completed.returncode, completed.stderr)
    share: dict[str, float] = json.loads(completed.stdout.splitlines()[-1])
    return share


def share_child(argv: list[str]) -> int:
    """Run goldgate's command line here, timing scoring and the bootstraps by thread CPU time.

    Both run in the thread that calls them with ``--jobs 1`` (one BLAS thread, as the command
    line loads NumPy), so the thread's CPU time is theirs alone; a pool's workers would not
    be counted, hence ``--jobs 1``.
    """
    from goldgate.cli import main as cli

    cli._single_threaded_blas()
    import goldgate.gate.rules as gate
    import goldgate.pipeline.score as score

    spent = {"scoring_cpu": 0.0, "bootstrap_cpu": 0.0}

    def timed(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            begin = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name] += time.thread_time() - begin

        return wrapper

    # the names the command line calls, replaced where it looks them up
    for module, name, label in (
        (score, "compact_parts", "scoring_cpu"),
        (gate, "compare_many", "bootstrap_cpu"),
    ):
        setattr(module, name, timed(label, getattr(module, name)))
    with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
        code = cli.main(argv)
    print(json.dumps(spent))
    return code


def _high_water(pid: int) -> int:
    """The peak resident bytes of process ``pid`` so far (VmHWM; 0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        pass
    return 0


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())
    return path.stat().st_size if path.exists() else 0


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def bench_size(size: int, jobs: list[int], formats: str, resamples: int) -> list[dict[str, object]]:
    """Every command at one size; one row per (command, jobs)."""
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix=f"goldgate-scale-{size}-") as name:
        directory = Path(name)
        generate(directory, size, formats, resamples)
        for job in jobs:
            predictions = directory / "predictions.jsonl"
            baseline = directory / "goldgate.baseline.json"
            baseline.unlink(missing_ok=True)
            steps = [("run", ["run", "-q"]), ("bless", ["bless", "-q"])]
            for label, argv in steps:
                seconds, peak, _, cpu = measure(directory, [*argv, "--jobs", str(job)])
                rows.append(_row(directory, size, label, job, seconds, peak, cpu))
            # the gate against the blessed baseline, with changed outputs
            blessed = directory / "blessed.jsonl"
            predictions.rename(blessed)
            (directory / "changed.jsonl").rename(predictions)
            seconds, peak, code, cpu = measure(directory, ["run", "-q", "--jobs", str(job)])
            row = _row(directory, size, "run+baseline", job, seconds, peak, cpu)
            row["exit"] = code
            if job == 1:
                share = measure_share(directory, ["run", "-q", "--jobs", "1"])
                row.update(share)
                print(json.dumps({"size": size, **share}), file=sys.stderr, flush=True)
            rows.append(row)
            # the same with one golden record edited, as in a pull request that fixes one
            goldens = directory / "goldens.jsonl"
            original = goldens.read_bytes()
            _edit_middle_record(goldens, size)
            seconds, peak, code, cpu = measure(directory, ["run", "-q", "--jobs", str(job)])
            row = _row(directory, size, "run+edited", job, seconds, peak, cpu)
            row["exit"] = code
            rows.append(row)
            goldens.write_bytes(original)
            predictions.rename(directory / "changed.jsonl")
            blessed.rename(predictions)
        seconds, peak, _, cpu = measure(directory, ["check"])
        unchanged = _row(directory, size, "check", 0, seconds, peak, cpu)
        # a blank line more: the same records in other bytes
        goldens = directory / "goldens.jsonl"
        with goldens.open("a") as appended:
            appended.write("\n")
        seconds, peak, _, cpu = measure(directory, ["check"])
        other_bytes = _row(directory, size, "check*", 0, seconds, peak, cpu)
        # one record edited: another set, described against the baseline
        _edit_middle_record(goldens, size)
        seconds, peak, _, cpu = measure(directory, ["check"])
        rows[:0] = [unchanged, other_bytes, _row(directory, size, "check+", 0, seconds, peak, cpu)]
    return rows


def _edit_middle_record(goldens: Path, size: int) -> None:
    """Give the record in the middle of the golden set other references."""
    lines = goldens.read_text().split("\n")
    record = json.loads(lines[size // 2])
    record["references"] = ["an edited reference"]
    lines[size // 2] = json.dumps(record)
    goldens.write_text("\n".join(lines))


def _row(
    directory: Path, size: int, label: str, jobs: int, seconds: float, peak: float, cpu: float
) -> dict[str, object]:
    baseline = _size(directory / "goldgate.baseline.json")
    checks = label.startswith("check")
    row: dict[str, object] = {
        "size": size,
        "command": label,
        "jobs": jobs,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "peak_mib": peak,
        "result_json": 0 if checks else _size(directory / "report" / "result.json"),
        "report_dir": 0 if checks else _size(directory / "report"),
        "baseline": baseline if checks or label == "bless" else 0,
    }
    # each measurement as it is made, so an interrupted run still leaves its figures
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def print_rows(rows: list[dict[str, object]]) -> None:
    """A Markdown table of every measurement."""
    print(
        "| examples | command | jobs | time | CPU time | peak memory | result.json | reports"
        " | baseline |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        size = int(row["size"])  # type: ignore[call-overload]
        baseline = int(row["baseline"])  # type: ignore[call-overload]
        per_example = f" ({baseline / size:.0f} B/example)" if baseline else ""
        print(
            f"| {size:,} | {row['command']} | {row['jobs'] or '-'} | {row['seconds']:.1f} s"
            f" | {row.get('cpu_seconds', 0.0):.1f} s | {row['peak_mib']:.0f} MiB"
            f" | {_mb(int(row['result_json']))}"  # type: ignore[call-overload]
            f" | {_mb(int(row['report_dir']))} | {_mb(baseline) if baseline else '-'}"  # type: ignore[call-overload]
            f"{per_example} |"
        )


def print_shares(rows: list[dict[str, object]]) -> None:
    """The bootstraps' CPU time against the metrics', per size (``--jobs 1`` runs)."""
    shares = [row for row in rows if "bootstrap_cpu" in row]
    if not shares:
        return
    print()
    print("| examples | scoring (metrics) CPU | bootstraps CPU | bootstraps ÷ metrics |")
    print("|---:|---:|---:|---:|")
    for row in shares:
        scoring, bootstrap = float(row["scoring_cpu"]), float(row["bootstrap_cpu"])  # type: ignore[arg-type]
        ratio = bootstrap / scoring if scoring else float("nan")
        print(f"| {row['size']:,} | {scoring:.2f} s | {bootstrap:.2f} s | {ratio:.2f}× |")


def share_only(size: int, resamples: int) -> dict[str, object]:
    """Generate a project, bless it and time the shares of a run against the baseline."""
    with tempfile.TemporaryDirectory(prefix=f"goldgate-share-{size}-") as name:
        directory = Path(name)
        generate(directory, size, "json", resamples)
        measure(directory, ["bless", "-q", "--jobs", "1"])
        (directory / "predictions.jsonl").rename(directory / "blessed.jsonl")
        (directory / "changed.jsonl").rename(directory / "predictions.jsonl")
        row: dict[str, object] = {"size": size}
        row.update(measure_share(directory, ["run", "-q", "--jobs", "1"]))
        print(json.dumps(row), file=sys.stderr, flush=True)
        return row


def print_slopes(rows: list[dict[str, object]]) -> None:
    """Time and memory per example between consecutive sizes, per command and jobs."""
    print()
    print("| command | jobs | sizes | time per 1k examples | memory per example |")
    print("|---|---:|---|---:|---:|")
    keys = sorted({(str(r["command"]), int(r["jobs"])) for r in rows})  # type: ignore[call-overload]
    for command, jobs in keys:
        points = sorted(
            (int(r["size"]), float(r["seconds"]), float(r["peak_mib"]))  # type: ignore[call-overload, arg-type]
            for r in rows
            if r["command"] == command and r["jobs"] == jobs
        )
        for (n1, t1, m1), (n2, t2, m2) in itertools.pairwise(points):
            slope_t = (t2 - t1) / (n2 - n1) * 1000
            slope_m = (m2 - m1) * 2**20 / (n2 - n1)
            print(
                f"| {command} | {jobs or '-'} | {n1:,} → {n2:,} | {slope_t:.3f} s"
                f" | {slope_m:,.0f} B |"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=1, help="--share-only measurements per size")
    parser.add_argument(
        "--formats", default="json", help="report formats, comma-separated (default: json)"
    )
    parser.add_argument("--json", type=Path, help="also write every measurement here")
    parser.add_argument(
        "--share-only",
        action="store_true",
        help="only the bootstraps' share of a run against the baseline, at each size",
    )
    if sys.argv[1:2] == ["--share-child"]:
        return share_child(sys.argv[2:])
    args = parser.parse_args()
    rows: list[dict[str, object]] = []
    if args.share_only:
        for _ in range(args.repeat):
            rows += [share_only(size, args.resamples) for size in args.sizes]
        print_shares(rows)
        return 0
    for size in args.sizes:
        rows += bench_size(size, args.jobs, args.formats, args.resamples)
        print(f"[{size:,} done]", file=sys.stderr, flush=True)
    print_rows(rows)
    print_slopes(rows)
    print_shares(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
