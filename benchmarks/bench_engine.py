"""CPU time of the metric engine alone on short QA records, metric by metric and all together.

The records are ``bench_scale.py``'s (one to six words an answer, one to three references,
70 % of the predictions right); the metrics are the ones its gate uses. Each line is the CPU
seconds of ``score_arrays(..., jobs=1)`` in this process (no reading, no bootstrap, no
report), so the figure is the engine's own cost per example, steady on a loaded machine.
The digest of the arrays lets two versions of the engine be compared for identical numbers.

    python benchmarks/bench_engine.py                 # 100,000 records
    python benchmarks/bench_engine.py --size 1000000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import generate
from goldgate.execution.pool import score_arrays
from goldgate.metrics.registry import metric_from_spec

SPECS = ["bleu", "chrf", "rouge1", "rouge2", "rougeL", "exact_match", "token_f1"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="records (default 100,000)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="goldgate-engine-") as tmp:
        directory = Path(tmp)
        generate(directory, args.size, "json", 1000)
        with (directory / "goldens.jsonl").open() as handle:
            goldens = [json.loads(line) for line in handle]
        with (directory / "predictions.jsonl").open() as handle:
            outputs = {row["id"]: row["output"] for row in map(json.loads, handle)}
    candidates = [outputs[row["id"]] for row in goldens]
    references = [row["references"] for row in goldens]
    metrics = [(spec, metric_from_spec(spec)) for spec in SPECS]
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"{args.size:,} QA records, --jobs 1, CPU seconds; load average {load}")
    alone = 0.0
    for pair in metrics:
        start = time.process_time()
        score_arrays([pair], candidates, references, jobs=1)
        seconds = time.process_time() - start
        alone += seconds
        print(f"  {pair[0]:<12} {seconds:7.2f} s")
    start = time.process_time()
    arrays = score_arrays(metrics, candidates, references, jobs=1)
    together = time.process_time() - start
    digest = hashlib.sha256(b"".join(array.tobytes() for array in arrays)).hexdigest()
    print(f"  all together {together:7.2f} s (one by one: {alone:.2f} s)")
    print(f"  {together / args.size * 1e6:.1f} µs per example; arrays' SHA-256 {digest[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
