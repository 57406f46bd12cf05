"""Record the corpus: ``python -m tests.corpus.record [CASE ...]`` (every case by default)."""

from __future__ import annotations

import sys

from tests.corpus.cases import CASES, REQUIRES
from tests.corpus.harness import PYTHON_FILE, python_version, run_case, write_recording


def main(names: list[str]) -> int:
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        print(f"record: no such case: {', '.join(unknown)}", file=sys.stderr)
        return 2
    failed = []
    for name in names or list(CASES):
        missing = REQUIRES[name]() if name in REQUIRES else None
        if missing:
            print(f"record: {name}: not recorded, {missing}", file=sys.stderr)
            continue
        try:
            files = run_case(CASES[name], name)
        except AssertionError as error:  # a step's exit code is not the case's
            print(f"record: {name}: not recorded: {error}", file=sys.stderr)
            failed.append(name)
            continue
        write_recording(name, files)
        PYTHON_FILE.write_text(python_version() + "\n")
        print(f"recorded {name}: {len(files)} files")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
