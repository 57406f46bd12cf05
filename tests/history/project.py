"""A small goldgate project in a git repository, for the history tests."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

CONFIG = """\
version: 1
system:
  predictions: preds/{{suite}}.jsonl
suites:
  qa:
    goldens: goldens/qa.jsonl
    metrics: {{exact_match: {{}}{more}}}
    gate:
      {metric}: {gate}
significance: {significance}
report: {{dir: out, formats: [json]}}
{extra}"""


ERROR_RATE = """\
def error_rate(candidate, references):
    return 0.0 if candidate in references else 100.0


error_rate.higher_is_better = False
"""


class GitProject:
    """``n`` questions, answered right or wrong at will; commits and blesses in a git repo."""

    def __init__(
        self,
        root: Path,
        *,
        n: int = 100,
        gate: str = "{max_drop: 2.0}",
        significance: str = "off",
        extra: str = "",
        git: bool = True,
        metric: str = "exact_match",
    ) -> None:
        self.root = root
        self.n = n
        self.ids = [f"q{i:03d}" for i in range(n)]
        self.metric = metric
        if metric != "exact_match":
            # an error rate, lower is better: a user's function metric in the project
            module = metric.partition(":")[0]
            (root / f"{module}.py").write_text(ERROR_RATE)
        self.write_config(gate=gate, significance=significance, extra=extra)
        rows = [
            {"id": i, "input": f"question {k}", "references": [f"answer {k}"]}
            for k, i in enumerate(self.ids)
        ]
        _write_jsonl(root / "goldens" / "qa.jsonl", rows)
        (root / ".gitignore").write_text(".goldgate/\nout/\n")
        self.set_right(n)
        self.git = git
        if git:
            self._git("init", "-q", "-b", "main")
            self.commit("initial")

    def write_config(self, *, gate: str, significance: str = "off", extra: str = "") -> None:
        more = f", {self.metric!r}: {{}}" if self.metric != "exact_match" else ""
        (self.root / "goldgate.yaml").write_text(
            CONFIG.format(
                gate=gate, significance=significance, extra=extra, metric=self.metric, more=more
            )
        )

    def set_right(self, right: int) -> None:
        """The first ``right`` questions answered right, the rest wrong."""
        rows = [
            {"id": i, "output": f"answer {k}" if k < right else "wrong"}
            for k, i in enumerate(self.ids)
        ]
        _write_jsonl(self.root / "preds" / "qa.jsonl", rows)

    def commit(self, message: str) -> str:
        self._git("add", "-A")
        self._git("commit", "-q", "--allow-empty", "-m", message)
        return self._git("rev-parse", "HEAD").strip()

    def _git(self, *args: str) -> str:
        done = subprocess.run(
            [
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "-c",
                "commit.gpgsign=false",
                *args,
            ],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
