"""Time ``goldgate run`` in predictions mode on 10,000 examples and split where the time goes.

One suite of 10,000 golden examples (WMT21 de-en from three systems, XSum, SQuAD v1.1 dev;
a generated corpus of the same shape without ``../shared/data`` or with ``--quick``) scored
with BLEU, chrF, ROUGE-1/2/L, exact match and token F1, a paired bootstrap of 1,000
resamples on the suite and on each of its three tag slices, against a baseline blessed from
the same examples with 10 % of the outputs changed.

Each measured run is a fresh Python process calling ``goldgate.runner.run``, with the
runner's steps wrapped in timers:

  load     config, golden set, predictions file, baseline file
  metrics  score_corpus (tokenising and per-example statistics)
  gate     evaluate_suite: bootstraps, comparisons, checks, slices
  json     building the result's examples and writing result.json
  total    wall time of run(); "gate's own work" = total - metrics

Peak memory is the child's ``ru_maxrss``. A second set of children runs the installed
``goldgate run`` command (interpreter start and imports included). Figures are medians of
``--repeat`` runs.

    python benchmarks/bench_gate.py              # real data, median of 3
    python benchmarks/bench_gate.py --quick      # 600 generated examples, one run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent / ".." / "shared" / "data"
MT_FILES = [
    "mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl",
    "mt_wmt21_newstest2021_de-en.Online-B.jsonl",
    "mt_wmt21_newstest2021_de-en.UEdin.jsonl",
]
XSUM_FILE = "summ_xsum_maynez2020.jsonl"
QA_FILE = "qa_squad_v1.1_dev.bert-ensemble.jsonl"
SIZE = 10_000

CONFIG = """\
version: 1
system: {{predictions: "predictions/{{suite}}.jsonl"}}
suites:
  bench:
    goldens: goldens/bench.jsonl
    metrics: {{bleu: {{}}, chrf: {{}}, rouge1: {{}}, rouge2: {{}}, rougeL: {{}},
               exact_match: {{}}, token_f1: {{}}}}
    gate:
      bleu: {{max_drop: 1.0}}
      chrf: {{max_drop: 1.0}}
      rougeL: {{max_drop: 1.0, slices: true}}
      exact_match: {{max_drop: 1.0, max_flips: 1000}}
      token_f1: {{max_drop: 1.0}}
significance: {{method: paired_bootstrap, resamples: {resamples}, alpha: 0.05, seed: 0}}
report: {{dir: report, formats: [json]}}
"""


# --- corpus -----------------------------------------------------------------------------------
def _rows(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def real_examples(data: Path) -> list[dict[str, Any]] | None:
    """10,000 examples: 3,000 MT, 2,000 XSum, 5,000 SQuAD, tagged by source."""
    paths = [data / name for name in [*MT_FILES, XSUM_FILE, QA_FILE]]
    if not all(path.exists() for path in paths):
        return None
    examples = []
    for path in paths[:3]:
        system = path.name.split(".")[-2]
        for row in _rows(path):
            examples.append((f"mt-{system}-{row['id']}", "mt", row))
    examples += [(f"xsum-{row['id']}", "xsum", row) for row in _rows(data / XSUM_FILE)]
    examples += [(f"qa-{row['id']}", "qa", row) for row in _rows(data / QA_FILE)]
    chosen = examples[:SIZE]
    return [
        {"id": i, "tag": tag, "references": row["references"], "candidate": row["candidate"]}
        for i, tag, row in chosen
    ]


def generated_examples(size: int) -> list[dict[str, Any]]:
    """Examples shaped like the real mix (lengths, reference counts), seeded."""
    rng = random.Random(0)
    stems = ["run", "walk", "talk", "read", "play", "work", "call", "open", "help", "look"]
    words = [f"{stem}{suffix}" for stem in stems for suffix in ("", "s", "ing", "ed")]
    words += ["the", "a", "of", "to", "in", "and", "city", "river", "year", "people", ",", "."]

    def sentence(low: int, high: int) -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(low, high)))

    def noisy(text: str, rate: float) -> str:
        return " ".join(rng.choice(words) if rng.random() < rate else w for w in text.split())

    out = []
    for index in range(size):
        tag = "mt" if index < size * 0.3 else "xsum" if index < size * 0.5 else "qa"
        low, high, refs = {"mt": (10, 40, 2), "xsum": (15, 30, 1), "qa": (1, 4, 3)}[tag]
        source = sentence(low, high)
        out.append(
            {
                "id": f"{tag}-{index}",
                "tag": tag,
                "references": [noisy(source, 0.2) for _ in range(refs)],
                "candidate": noisy(source, 0.3),
            }
        )
    return out


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _changed(text: str, rng: random.Random) -> str:
    words = text.split()
    return " ".join(words[:-1]) if len(words) > 1 and rng.random() < 0.5 else "no answer"


def build_project(directory: Path, examples: list[dict[str, Any]], resamples: int) -> None:
    """goldgate.yaml, the golden set, and two predictions files: blessed and current."""
    (directory / "goldgate.yaml").write_text(CONFIG.format(resamples=resamples))
    _write_jsonl(
        directory / "goldens" / "bench.jsonl",
        [
            {"id": e["id"], "input": "", "references": e["references"], "tags": [e["tag"]]}
            for e in examples
        ],
    )
    _write_jsonl(
        directory / "blessed.jsonl",
        [{"id": e["id"], "output": e["candidate"]} for e in examples],
    )
    rng = random.Random(1)
    _write_jsonl(
        directory / "current.jsonl",
        [
            {"id": e["id"], "output": _changed(e["candidate"], rng)}
            if rng.random() < 0.1
            else {"id": e["id"], "output": e["candidate"]}
            for e in examples
        ],
    )


# --- the measured child -----------------------------------------------------------------------
def child(directory: Path, action: str) -> None:
    """Run ``action`` (run or bless) in-process with timers; print the timings as JSON."""
    started = time.perf_counter()
    import goldgate.execution.local as local
    import goldgate.pipeline.compare as compare
    import goldgate.pipeline.record as record
    import goldgate.pipeline.score as score
    import goldgate.runner as runner
    import goldgate.systems.obtain as systems
    from goldgate.model.config_loading import load_config

    imported = time.perf_counter() - started
    phases = {"load": 0.0, "metrics": 0.0, "gate": 0.0, "json": 0.0}

    def timed(owner: Any, name: str, phase: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            begin = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                phases[phase] += time.perf_counter() - begin

        setattr(owner, name, wrapper)

    # each name replaced where the pipeline looks it up
    timed(local, "load_goldens", "load")
    timed(systems, "collect_outputs", "load")
    timed(runner, "load_baseline", "load")
    timed(score, "score_outputs", "metrics")
    timed(compare, "evaluate_suite", "gate")
    timed(compare, "_examples", "json")
    timed(record, "write_result", "json")
    timed(record, "write_baseline", "json")

    begin = time.perf_counter()
    config = load_config(directory / "goldgate.yaml")
    phases["load"] += time.perf_counter() - begin
    if action == "bless":
        runner.bless(config)
        verdict = "blessed"
    else:
        verdict = runner.run(config).verdict.value
    total = time.perf_counter() - begin
    print(json.dumps({"imports": imported, "total": total, "verdict": verdict, **phases}))


def run_child(directory: Path, action: str) -> tuple[dict[str, Any], float]:
    """One fresh process measuring ``action``; its timings and peak memory."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", action, str(directory)]
    process = subprocess.Popen(argv, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    _, status, usage = os.wait4(process.pid, 0)
    stdout, stderr = process.stdout.read(), process.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.stderr.write(stderr.decode("utf-8", "replace"))
        raise SystemExit(f"child failed: {' '.join(argv)}")
    return json.loads(stdout.decode("utf-8").strip().splitlines()[-1]), usage.ru_maxrss / 1024


def run_cli(directory: Path) -> tuple[float, float, int]:
    """The installed ``goldgate run`` command: wall seconds, peak MiB, exit code."""
    script = Path(sys.executable).parent / "goldgate"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "goldgate.cli.main"]
    begin = time.perf_counter()
    process = subprocess.Popen(
        [*argv, "run", "-q"], cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - begin
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.stderr.write(process.stderr.read().decode("utf-8", "replace"))
        raise SystemExit("goldgate run failed")
    return seconds, usage.ru_maxrss / 1024, code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--quick", action="store_true", help="600 generated examples, one run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--child", nargs=2, metavar=("ACTION", "DIR"), help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    if args.child:
        child(Path(args.child[1]), args.child[0])
        return 0

    examples = None if args.quick else real_examples(args.data.resolve())
    source = "real data" if examples else "generated"
    if examples is None:
        examples = generated_examples(600 if args.quick else SIZE)
    repeat = 1 if args.quick else args.repeat

    with tempfile.TemporaryDirectory(prefix="goldgate-bench-") as temporary:
        directory = Path(temporary)
        build_project(directory, examples, args.resamples)
        predictions = directory / "predictions" / "bench.jsonl"
        predictions.parent.mkdir(parents=True, exist_ok=True)
        predictions.write_bytes((directory / "blessed.jsonl").read_bytes())
        blessed, bless_mib = run_child(directory, "bless")
        predictions.write_bytes((directory / "current.jsonl").read_bytes())

        runs: list[dict[str, Any]] = []
        peaks: list[float] = []
        cli: list[tuple[float, float, int]] = []
        for _ in range(repeat):
            timings, peak = run_child(directory, "run")
            runs.append(timings)
            peaks.append(peak)
            cli.append(run_cli(directory))

    def median(key: str) -> float:
        return statistics.median(run[key] for run in runs)

    total, metrics = median("total"), median("metrics")
    own = statistics.median(run["total"] - run["metrics"] for run in runs)
    figures = {
        "examples": len(examples),
        "source": source,
        "resamples": args.resamples,
        "repeat": repeat,
        "verdict": runs[0]["verdict"],
        "run_total_s": total,
        "metrics_s": metrics,
        "load_s": median("load"),
        "gate_s": median("gate"),
        "json_s": median("json"),
        "gate_own_work_s": own,
        "gate_own_over_metrics": own / metrics if metrics else float("nan"),
        "run_peak_mib": statistics.median(peaks),
        "cli_run_s": statistics.median(c[0] for c in cli),
        "cli_peak_mib": statistics.median(c[1] for c in cli),
        "bless_total_s": blessed["total"],
        "bless_peak_mib": bless_mib,
    }
    print(
        f"goldgate run, predictions mode: {len(examples):,} examples ({source}), 7 metrics,"
        f" {args.resamples} resamples on the suite and 3 slices; median of {repeat}"
    )
    print(f"  run() total          {total:8.2f} s   peak {figures['run_peak_mib']:7.1f} MiB")
    print(f"    metrics            {metrics:8.2f} s")
    print(f"    load               {figures['load_s']:8.2f} s")
    print(f"    gate (bootstrap)   {figures['gate_s']:8.2f} s")
    print(f"    result + JSON      {figures['json_s']:8.2f} s")
    print(
        f"    gate's own work    {own:8.2f} s   = {figures['gate_own_over_metrics']:.2f}× metrics"
    )
    print(
        f"  goldgate run (CLI)   {figures['cli_run_s']:8.2f} s   peak"
        f" {figures['cli_peak_mib']:7.1f} MiB   (fresh process, imports included)"
    )
    print(f"  bless() total        {blessed['total']:8.2f} s   peak {bless_mib:7.1f} MiB")
    if args.json:
        print(json.dumps(figures))
    return 0 if own < metrics else 1


if __name__ == "__main__":
    sys.exit(main())
