"""CPU time of BLEU and chrF scoring alone, goldgate's engine against sacrebleu's, on WMT21 de-en.

``bench_metrics.py`` times both tools process against process, where the interpreter's start
and NumPy's import (~0.1 s of CPU here, which sacrebleu never imports) weigh on goldgate's
side. This benchmark times what happens after the imports: each measurement is a fresh
process that imports its library, reads the corpus, and then times one scoring of the whole
corpus by CPU time (``time.process_time``): ``score_corpus`` and the corpus score for
goldgate, as ``goldgate score`` runs it (cyclic collector off, one BLAS thread);
``corpus_bleu`` / ``corpus_chrf`` for sacrebleu, as its API runs by default. A fresh process
each time, because both tools cache tokenised text (sacrebleu's 13a tokenizer has an LRU
cache): a second call in one process would time the caches. Both scores must be equal.
Peak memory is each process's resident peak (its imports and the corpus included).

    python benchmarks/bench_engine_sacrebleu.py             # the shared WMT21 de-en, median of 5
    python benchmarks/bench_engine_sacrebleu.py --repeat 9
    python benchmarks/bench_engine_sacrebleu.py --data PATH  # any JSONL of candidate/references

sacrebleu is a test-only dependency: goldgate itself never imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MT_FILE = "mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl"
DEFAULT_DATA = HERE.parent / ".." / "shared" / "data" / MT_FILE
#: one scoring of the whole corpus: its scores by metric
Scorer = Callable[[], dict[str, float]]
#: the groups timed: which metrics one scoring computes
GROUPS = {"BLEU": ["bleu"], "chrF": ["chrf"], "BLEU + chrF": ["bleu", "chrf"]}


def _read(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return [row["candidate"] for row in rows], [row["references"] for row in rows]


def _goldgate(candidates: list[str], references: list[list[str]], names: list[str]) -> Scorer:
    import gc

    from goldgate.cli import main as cli

    cli._single_threaded_blas()
    from goldgate.metrics.engine import score_corpus
    from goldgate.metrics.registry import metric_from_spec

    metrics = [(name, metric_from_spec(name)) for name in names]

    def score() -> dict[str, float]:
        gc.disable()  # as `goldgate score` scores
        try:
            results = score_corpus(metrics, candidates, references)
            return {result.spec: result.corpus_score().score for result in results}
        finally:
            gc.enable()

    return score


def _sacrebleu(candidates: list[str], references: list[list[str]], names: list[str]) -> Scorer:
    import sacrebleu

    width = max(len(refs) for refs in references)
    streams = [[refs[i] if i < len(refs) else None for refs in references] for i in range(width)]
    functions: dict[str, Any] = {"bleu": sacrebleu.corpus_bleu, "chrf": sacrebleu.corpus_chrf}

    def score() -> dict[str, float]:
        return {name: functions[name](candidates, streams).score for name in names}

    return score


def child(side: str, path: Path, names: list[str]) -> int:
    """One measurement: import, read, then time one scoring; print CPU seconds and scores."""
    candidates, references = _read(path)
    score = (_goldgate if side == "goldgate" else _sacrebleu)(candidates, references, names)
    begin = time.process_time()
    scores = score()
    seconds = time.process_time() - begin
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux
    print(json.dumps({"cpu": seconds, "peak_mb": peak_mb, "scores": scores}))
    return 0


def measure(side: str, path: Path, names: list[str]) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", side, str(path), *names],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        sys.stderr.write(completed.stderr)
        raise SystemExit(f"the {side} measurement failed with exit code {completed.returncode}")
    result: dict[str, Any] = json.loads(completed.stdout.splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else argv
    if words[:1] == ["--child"]:
        return child(words[1], Path(words[2]), words[3:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a JSONL corpus")
    parser.add_argument("--repeat", type=int, default=5, help="processes per side (median)")
    args = parser.parse_args(words)
    if not args.data.exists():
        print(f"no corpus at {args.data}: nothing to measure")
        return 0
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, in an untimed first run
    for side in ("goldgate", "sacrebleu"):
        measure(side, args.data, ["bleu"])
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{args.data.name}: scoring alone, CPU seconds, median of {args.repeat} processes")
    print(f"each; load average {load}\n")
    print(
        "| metrics | goldgate engine | sacrebleu | speed | peak MB goldgate / sacrebleu"
        " | scores equal |"
    )
    print("|---|---:|---:|---:|---:|---|")
    equal_everywhere = True
    for label, names in GROUPS.items():
        times: dict[str, list[float]] = {"goldgate": [], "sacrebleu": []}
        peaks: dict[str, float] = {"goldgate": 0.0, "sacrebleu": 0.0}
        scores: dict[str, dict[str, float]] = {}
        # the sides alternate, so a change in the machine's load falls on both
        for _ in range(max(1, args.repeat)):
            for side in times:
                result = measure(side, args.data, names)
                times[side].append(result["cpu"])
                peaks[side] = max(peaks[side], result["peak_mb"])
                scores[side] = result["scores"]
        ours, theirs = (statistics.median(times[side]) for side in ("goldgate", "sacrebleu"))
        equal = all(
            abs(scores["goldgate"][name] - scores["sacrebleu"][name]) < 1e-9 for name in names
        )
        equal_everywhere &= equal
        print(
            f"| {label} | {ours * 1000:.0f} ms | {theirs * 1000:.0f} ms | {theirs / ours:.1f}×"
            f" | {peaks['goldgate']:.0f} / {peaks['sacrebleu']:.0f} | {'yes' if equal else 'NO'} |"
        )
    return 0 if equal_everywhere else 1


if __name__ == "__main__":
    sys.exit(main())
