"""Run a composite action's steps locally, the way the GitHub runner would.

``run:`` steps execute in bash with ``${{ }}`` expressions evaluated only where GitHub evaluates
them outside scripts (``env:``, ``working-directory:``, ``with:``); ``uses:`` steps are recorded,
not executed. Scripts themselves are run verbatim: if one contained an expression, it would
stay unevaluated and the lint test would have failed first.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class StepRun:
    name: str
    kind: str  # "run" | "uses" | "skipped"
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""
    uses: str = ""
    with_: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)


@dataclass
class ActionRun:
    steps: list[StepRun]
    outputs: dict[str, str]

    @property
    def failed(self) -> bool:
        return any(step.returncode != 0 for step in self.steps)

    @property
    def stdout(self) -> str:
        return "".join(step.stdout for step in self.steps)

    def step(self, name: str) -> StepRun:
        return next(step for step in self.steps if step.name == name)


def _lookup(expression: str, context: dict[str, Any]) -> str:
    value: Any = context
    for part in expression.split("."):
        if not isinstance(value, dict):
            return ""
        value = value.get(part, "")
    return "" if value is None else str(value)


def evaluate(text: str, context: dict[str, Any]) -> str:
    """Evaluate ``${{ a.b.c }}`` property lookups (all the action uses outside scripts)."""
    return _EXPRESSION.sub(lambda m: _lookup(m.group(1), context), text)


def parse_output_file(path: Path) -> dict[str, str]:
    """Read a ``$GITHUB_OUTPUT`` file: ``k=v`` lines and ``k<<DELIM`` heredocs."""
    outputs: dict[str, str] = {}
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            i += 1
            while lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            outputs[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
        i += 1
    return outputs


def run_action(
    action_dir: Path,
    *,
    inputs: dict[str, str],
    github: dict[str, str],
    environ: dict[str, str],
    workspace: Path,
    scratch: Path,
) -> ActionRun:
    """Execute action.yml's steps in order, as a composite action runs them."""
    spec = yaml.safe_load((action_dir / "action.yml").read_text(encoding="utf-8"))
    defaults = {
        name: str(meta.get("default", "")) for name, meta in (spec.get("inputs") or {}).items()
    }
    context: dict[str, Any] = {"github": dict(github), "steps": {}}
    context["inputs"] = {k: evaluate(v, context) for k, v in defaults.items()} | inputs
    runs: list[StepRun] = []
    failed = False
    for index, step in enumerate(spec["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        condition = str(step.get("if", ""))
        if failed and "always()" not in condition:
            runs.append(StepRun(name, "skipped"))
            continue
        if "uses" in step:
            with_ = {k: evaluate(str(v), context) for k, v in (step.get("with") or {}).items()}
            runs.append(StepRun(name, "uses", uses=step["uses"], with_=with_))
            continue
        output_file = scratch / f"output-{index}"
        output_file.write_text("", encoding="utf-8")
        env = dict(environ)
        env.update({k: evaluate(str(v), context) for k, v in (step.get("env") or {}).items()})
        env["GITHUB_OUTPUT"] = str(output_file)
        env["GITHUB_ACTION_PATH"] = str(action_dir)
        script = scratch / f"step-{index}.sh"
        script.write_text(step["run"], encoding="utf-8")
        cwd = workspace / evaluate(str(step.get("working-directory", ".")), context)
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        outputs = parse_output_file(output_file)
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": outputs}
        runs.append(
            StepRun(name, "run", proc.returncode, proc.stdout, proc.stderr, outputs=outputs)
        )
        failed = failed or proc.returncode != 0
    action_outputs = {
        name: evaluate(str(meta.get("value", "")), context)
        for name, meta in (spec.get("outputs") or {}).items()
    }
    return ActionRun(runs, action_outputs)


def python_shim(directory: Path, record: Path) -> Path:
    """A ``python`` that records ``-m pip`` calls instead of installing, else runs Python."""
    directory.mkdir(parents=True, exist_ok=True)
    shim = directory / "python"
    real = sys.executable
    shim.write_text(
        "#!/usr/bin/env bash\n"
        'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then\n'
        f'  printf "%s\\n" "$*" >> "{record}"\n'
        "  exit 0\n"
        "fi\n"
        f'exec "{real}" "$@"\n',
        encoding="utf-8",
    )
    shim.chmod(0o755)
    return directory
