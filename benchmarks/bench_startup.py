"""Time goldgate's start: ``goldgate --version`` and ``goldgate score`` on one row.

Both are fresh processes (interpreter start and imports included), what a user waits for on
every call. Give ``--against`` another installation's ``goldgate`` executable (for example a
checkout of an earlier commit with its own virtual environment) and the two are run
alternately, in one run on one machine, so that load and caches hit both alike; the table
shows the medians, their ratio, and how many modules each start imports.

    python benchmarks/bench_startup.py
    python benchmarks/bench_startup.py --against ../before/.venv/bin/goldgate --repeat 40
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

ROW = {"candidate": "the cat sat on the mat", "references": ["the cat is on the mat"]}

#: counts the modules a command imports: the command's own main, in a process that then
#: prints len(sys.modules) (its output and exit code are the command's, ignored here)
COUNT_MODULES = """\
import atexit, sys
atexit.register(lambda: print(len(sys.modules), file=sys.__stderr__))
from {module} import main
sys.argv = ["goldgate", *{args!r}]
try:
    main()
except SystemExit:
    pass
"""


def _commands(row_file: Path) -> dict[str, list[str]]:
    return {
        "goldgate --version": ["--version"],
        "goldgate score (1 row, bleu)": ["score", str(row_file), "--metric", "bleu"],
    }


def _time(executable: str, args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [executable, *args], capture_output=True, check=True, env={**os.environ, "NO_COLOR": "1"}
    )
    return time.perf_counter() - start


def _python_of(executable: str) -> tuple[str, str]:
    """The interpreter behind a console script, and the module its ``main`` lives in."""
    lines = Path(executable).read_text(encoding="utf-8").splitlines()
    python = lines[0].removeprefix("#!").strip()
    module = next(
        line.split()[1] for line in lines if line.startswith("from ") and " import main" in line
    )
    return python, module


def _modules(executable: str, args: list[str]) -> int:
    python, module = _python_of(executable)
    done = subprocess.run(
        [python, "-c", COUNT_MODULES.format(module=module, args=args)],
        capture_output=True,
        text=True,
        check=False,
    )
    return int(done.stderr.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", help="another installation's goldgate executable")
    parser.add_argument("--repeat", type=int, default=20, help="runs of each (median)")
    args = parser.parse_args()
    here = str(Path(sys.executable).with_name("goldgate"))
    sides = {"this": here}
    if args.against:
        sides["against"] = str(Path(args.against).resolve())
    with tempfile.TemporaryDirectory() as folder:
        row_file = Path(folder) / "row.jsonl"
        row_file.write_text(json.dumps(ROW) + "\n", encoding="utf-8")
        print(f"{'command':<30} {'side':<8} {'median ms':>10} {'modules':>8}")
        for label, command in _commands(row_file).items():
            times: dict[str, list[float]] = {side: [] for side in sides}
            for executable in sides.values():
                _time(executable, command)  # warm the file cache once
            for _ in range(args.repeat):
                for side, executable in sides.items():
                    times[side].append(_time(executable, command))
            medians = {side: statistics.median(values) for side, values in times.items()}
            for side, executable in sides.items():
                count = _modules(executable, command)
                print(f"{label:<30} {side:<8} {medians[side] * 1000:>10.1f} {count:>8}")
            if "against" in medians:
                print(f"{'':<30} {'ratio':<8} {medians['this'] / medians['against']:>10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
