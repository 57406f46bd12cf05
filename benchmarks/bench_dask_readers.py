"""Golden sets and predictions of many files, read and scored on a Dask LocalCluster.

For each size, bench_scale's QA project (BLEU, chrF, ROUGE-1/2/L, exact match, token F1, a
paired bootstrap) is generated and its golden set and predictions split into ``--files``
part files each (JSON Lines, or Parquet with ``--parquet``); then ``goldgate run`` runs as a
fresh process:

  local   the one-file golden set and predictions, ``--jobs 1`` and ``--jobs 2``
  dask    the part files as globs, ``--dask local`` (a LocalCluster, one worker per core):
          read, validated, joined and scored on the workers

Printed per run: wall seconds, CPU seconds and peak memory of the process tree (the
cluster's workers are children of the run, so they count) and whether ``result.json``
equals the local one apart from ``created_at``, the golden set's location and the
examples' line numbers.

    python benchmarks/bench_dask_readers.py --sizes 10000 30000 --files 8
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import generate, measure


def split(directory: Path, files: int, parquet: bool) -> None:
    """goldens.jsonl and predictions.jsonl as ``files`` parts each under parts/."""
    parts = directory / "parts"
    parts.mkdir()
    for name in ("goldens", "predictions"):
        rows = [json.loads(line) for line in (directory / f"{name}.jsonl").open()]
        step = -(-len(rows) // files)
        for index in range(files):
            chunk = rows[index * step : (index + 1) * step]
            path = parts / f"{name}-{index:03d}.{'parquet' if parquet else 'jsonl'}"
            if parquet:
                import pyarrow as pa
                import pyarrow.parquet as pq

                pq.write_table(pa.Table.from_pylist(chunk), path)
            else:
                path.write_text("".join(json.dumps(row) + "\n" for row in chunk))


def _comparable(directory: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((directory / "report" / "result.json").read_text())
    document.pop("created_at")
    for suite in document["suites"]:
        suite.pop("goldens")
        for example in suite["examples"]:
            example.pop("line", None)
    return document


def bench(size: int, files: int, parquet: bool) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix=f"goldgate-dask-{size}-") as name:
        directory = Path(name)
        generate(directory, size, "json", 1000)
        split(directory, files, parquet)
        config = directory / "goldgate.yaml"
        text = config.read_text()
        local = None
        for jobs in (1, 2):
            seconds, peak, _, cpu = measure(directory, ["run", "-q", "--jobs", str(jobs)])
            same = local is None or _comparable(directory) == local
            local = _comparable(directory)
            rows.append(_row(size, files, f"local --jobs {jobs}", seconds, cpu, peak, same))
        suffix = "parquet" if parquet else "jsonl"
        config.write_text(
            text.replace('"predictions.jsonl"', f'"parts/predictions-*.{suffix}"').replace(
                "goldens: goldens.jsonl", f'goldens: "parts/goldens-*.{suffix}"'
            )
        )
        seconds, peak, _, cpu = measure(directory, ["run", "-q", "--dask", "local"])
        same = _comparable(directory) == local
        rows.append(_row(size, files, f"dask ({suffix} parts)", seconds, cpu, peak, same))
    return rows


def _row(
    size: int, files: int, label: str, seconds: float, cpu: float, peak: float, same: bool
) -> dict[str, object]:
    row: dict[str, object] = {
        "size": size,
        "files": files,
        "run": label,
        "seconds": round(seconds, 1),
        "cpu_seconds": round(cpu, 1),
        "peak_mib": round(peak),
        "same_result": same,
    }
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 30_000])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--parquet", action="store_true")
    args = parser.parse_args()
    rows = [row for size in args.sizes for row in bench(size, args.files, args.parquet)]
    print("| examples | files | run | time | CPU (process tree) | peak memory | same result.json |")
    print("|---:|---:|---|---:|---:|---:|---|")
    for row in rows:
        print(
            f"| {row['size']:,} | {row['files']} | {row['run']} | {row['seconds']} s"
            f" | {row['cpu_seconds']} s | {row['peak_mib']} MiB"
            f" | {'yes' if row['same_result'] else 'NO'} |"
        )
    return 0 if all(row["same_result"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
