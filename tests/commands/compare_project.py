"""A scaffolded project with three candidate systems for ``goldgate compare A B C``.

``a`` is the scaffold's own predictions, ``b`` gets one example of each suite wrong, ``c``
six; each is a predictions file ``pred_NAME_{suite}.jsonl`` and a configured system of the
same name, and :func:`gate_run` gates one against another as ``goldgate run`` would.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from goldgate.cli.main import main

#: how many examples of each suite a system answers wrong
WRONG = {"a": 0, "b": 1, "c": 6}
#: an output no report may show raw
HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>\u202e|`@here"


def build(root: Path, *, hostile: bool = False) -> Path:
    """The scaffold in ``root`` (the working directory) with systems a, b and c."""
    assert main(["init"]) == 0
    for suite in ("qa", "translate"):
        rows = [
            json.loads(line)
            for line in (root / "predictions" / f"{suite}.jsonl").read_text().splitlines()
        ]
        for name, wrong in WRONG.items():
            changed = [dict(row) for row in rows]
            for row in changed[:wrong]:
                row["output"] = HOSTILE if hostile else f"something else from {name}"
            (root / f"pred_{name}_{suite}.jsonl").write_text(
                "".join(json.dumps(row) + "\n" for row in changed)
            )
    config = root / "goldgate.yaml"
    systems = "".join(
        f"  {name}: {{predictions: 'pred_{name}_{{suite}}.jsonl'}}\n" for name in WRONG
    )
    config.write_text(config.read_text() + "systems:\n" + systems)
    return root


def use(root: Path, name: str) -> None:
    """Make system ``name``'s outputs the project's predictions."""
    for suite in ("qa", "translate"):
        shutil.copy(root / f"pred_{name}_{suite}.jsonl", root / "predictions" / f"{suite}.jsonl")


def saved_run(root: Path, name: str) -> Path:
    """``goldgate run`` of system ``name`` against whatever baseline there is; its result."""
    use(root, name)
    main(["run", "-q", "--report-dir", f"run-{name}", "--format", "json"])
    return root / f"run-{name}" / "result.json"


def gate_run(root: Path, baseline: str, current: str) -> dict[tuple[str, str], float]:
    """Bless ``baseline``, gate ``current`` against it: (suite, metric) → the gate's p-value."""
    use(root, baseline)
    assert main(["bless", "-q"]) == 0
    result = json.loads(saved_run(root, current).read_text())
    return {
        (suite["name"], metric["metric"]): metric["p_value"]
        for suite in result["suites"]
        for metric in suite["metrics"]
    }
