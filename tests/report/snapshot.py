"""Golden-file comparison for rendered reports.

``GOLDGATE_UPDATE_SNAPSHOTS=1 pytest tests/report`` rewrites the golden files. On a mismatch
the actual output is saved beside the golden file as ``<name>.actual`` (git-ignored) so it can
be diffed or promoted by hand.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

SNAPSHOTS = Path(__file__).with_name("snapshots")
UPDATE = os.environ.get("GOLDGATE_UPDATE_SNAPSHOTS") == "1"


def assert_snapshot(name: str, actual: str) -> None:
    """Compare ``actual`` with ``snapshots/<name>``; update it when asked to."""
    golden = SNAPSHOTS / name
    saved = golden.with_name(golden.name + ".actual")
    if UPDATE:
        golden.write_text(actual, encoding="utf-8", newline="")
        saved.unlink(missing_ok=True)
        return
    if not golden.exists():
        saved.write_text(actual, encoding="utf-8", newline="")
        pytest.fail(
            f"no snapshot {golden}; actual output saved to {saved} (set "
            "GOLDGATE_UPDATE_SNAPSHOTS=1 to create it)"
        )
    expected = golden.read_text(encoding="utf-8")
    if actual == expected:
        saved.unlink(missing_ok=True)
        return
    saved.write_text(actual, encoding="utf-8", newline="")
    diff = "".join(
        list(
            difflib.unified_diff(
                expected.splitlines(keepends=True),
                actual.splitlines(keepends=True),
                str(golden),
                str(saved),
            )
        )[:80]
    )
    pytest.fail(
        f"{name} differs from its snapshot; actual saved to {saved}; "
        f"GOLDGATE_UPDATE_SNAPSHOTS=1 accepts it\n{diff}"
    )
