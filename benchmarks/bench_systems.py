"""Time goldgate's own overhead in obtaining outputs: command, sync and async callable, cache.

The systems do no work (echo, ``str.upper``), so the figures are goldgate's per-output cost:
JSON over pipes, thread or event-loop scheduling, one cache line written per output. Each
row is the median of ``--repeat`` runs on ``--n`` examples, in a fresh temporary directory:

  fresh    every output obtained from the system (and appended to the cache)
  cached   every output read back from the cache (``system.cache: reuse``)

    .venv/bin/python benchmarks/bench_systems.py [--n 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from goldgate.model.config import SystemConfig
from goldgate.model.goldens import load_goldens
from goldgate.systems.obtain import obtain_outputs

ECHO = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    r = json.loads(line)\n"
    "    print(json.dumps({'id': r['id'], 'output': r['input']}))\n"
)
FUNCTIONS = "def upper(x):\n    return x.upper()\n\nasync def aupper(x):\n    return x.upper()\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        rows = (
            json.dumps({"id": f"i{i}", "input": f"text {i} " * 10, "reference": "r"})
            for i in range(args.n)
        )
        (root / "bench.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
        (root / "echo.py").write_text(ECHO, encoding="utf-8")
        (root / "bench_functions.py").write_text(FUNCTIONS, encoding="utf-8")
        golden = load_goldens(root / "bench.jsonl", "bench")
        systems = {
            "command": SystemConfig(command=[sys.executable, "echo.py"]),
            "sync callable": SystemConfig(callable="bench_functions:upper"),
            "async callable": SystemConfig(callable="bench_functions:aupper"),
        }
        print(f"{args.n:,} outputs, median of {args.repeat}")
        for label, system in systems.items():
            fresh, cached = [], []
            for attempt in range(args.repeat):
                reuse = system.model_copy(update={"cache": "reuse"})
                cache_dir = root / f".goldgate-{label}-{attempt}"
                started = time.perf_counter()
                obtain_outputs(reuse, golden, root=root, cache_dir=cache_dir)
                fresh.append(time.perf_counter() - started)
                started = time.perf_counter()
                obtain_outputs(reuse, golden, root=root, cache_dir=cache_dir)
                cached.append(time.perf_counter() - started)
            f, c = statistics.median(fresh), statistics.median(cached)
            print(
                f"  {label:15} fresh {f:6.2f}s ({args.n / f:9,.0f}/s)   "
                f"cached {c:6.2f}s ({args.n / c:9,.0f}/s)"
            )


if __name__ == "__main__":
    main()
