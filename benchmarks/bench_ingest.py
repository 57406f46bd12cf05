"""Reading a golden set and its predictions: time and memory per example, in one process.

Generates bench_scale's project (short QA records, JSON Lines) at each size, then reads it
the way ``goldgate run`` and ``goldgate check`` do: ``load_goldens`` (parse, validate,
content hash and record digests), the digests as a mapping, and ``read_predictions``.
Printed per size: CPU seconds of each step (best of ``--repeat``; CPU, not wall time, so
that a shared machine's load matters less) and the bytes per example the loaded golden set
and the outputs hold (tracemalloc, in a separate pass so that tracing does not slow the
timed one).

    python benchmarks/bench_ingest.py --sizes 100000 1000000
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import generate
from goldgate.model.goldens import load_goldens
from goldgate.systems.predictions import read_predictions


def measure(directory: Path, repeat: int) -> dict[str, float]:
    """CPU seconds of each step (best of ``repeat``) and bytes per example held."""
    goldens, predictions = directory / "goldens.jsonl", directory / "predictions.jsonl"
    times: dict[str, list[float]] = {"load_goldens": [], "digests": [], "read_predictions": []}
    for _ in range(repeat):
        gc.collect()
        begin = time.process_time()
        golden = load_goldens(goldens, "qa")
        middle = time.process_time()
        golden.digests()["q0000000"]  # the mapping is built on the first lookup
        after = time.process_time()
        read_predictions(predictions, golden)
        end = time.process_time()
        times["load_goldens"].append(middle - begin)
        times["digests"].append(after - middle)
        times["read_predictions"].append(end - after)
        del golden
    found = {step: min(seconds) for step, seconds in times.items()}
    gc.collect()
    tracemalloc.start()
    golden = load_goldens(goldens, "qa")
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    outputs = read_predictions(predictions, golden)
    gc.collect()
    both = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    found["golden_bytes"] = held / len(golden)
    found["output_bytes"] = (both - held) / len(outputs)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'examples':>9} {'load_goldens':>12} {'digests':>8} {'predictions':>11}"
        f" {'golden B/ex':>11} {'outputs B/ex':>12}   (CPU s, best of {args.repeat})"
    )
    for size in args.sizes:
        with tempfile.TemporaryDirectory(prefix="goldgate-ingest-") as tmp:
            generate(Path(tmp), size, "json", 1000)
            found = measure(Path(tmp), args.repeat)
        print(
            f"{size:>9,} {found['load_goldens']:>12.2f} {found['digests']:>8.2f}"
            f" {found['read_predictions']:>11.2f} {found['golden_bytes']:>11.0f}"
            f" {found['output_bytes']:>12.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
