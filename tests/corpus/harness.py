"""Run a corpus case in a directory and collect what it showed, normalised.

A case is a function of a :class:`CorpusProject`: it writes files, runs ``goldgate`` through
the installed command (as a user would, in a subprocess), and calls :meth:`capture` after
the steps whose files matter. Everything it collects is text in :attr:`CorpusProject.files`,
keyed by a relative name, so recording and comparing are the same dictionary written or read.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import goldgate
from tests.test_end_to_end import GOLDGATE

REPO = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).resolve().parent / "recorded"

#: the modification time of every file a case writes (2026-01-01)
FIXED_MTIME = 1767225600

#: files larger than this are kept as their SHA-256 (still a byte-for-byte comparison)
DIGEST_ABOVE = 128 * 1024

#: the report files captured after a step, by the name they are kept under
REPORT_FILES = {
    "result.json": "goldgate-report/result.json",
    "report.md": "goldgate-report/report.md",
    "junit.xml": "goldgate-report/junit.xml",
}


# A fixed identity and clock for the git commits a case makes, so their hashes are the same on
# every machine and every run.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Corpus",
    "GIT_AUTHOR_EMAIL": "corpus@example.invalid",
    "GIT_COMMITTER_NAME": "Corpus",
    "GIT_COMMITTER_EMAIL": "corpus@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}

_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?")
_JUNIT_TIME = re.compile(r'\btime="[0-9.e+-]+"')
_DURATION = re.compile(r"\b(in|after|took) \d+(?:\.\d+)?(ms| ?s)\b")
# a system's identity holds absolute paths and the command's files' times (outside git)
_IDENTITY = re.compile(r'"system": "[0-9a-f]{64}"')
_PORT = re.compile(r"\b(127\.0\.0\.1|localhost):\d+")
_CRASH = re.compile(r"crash-[\w.-]+?\.txt")
# the diagnosis records the Python and package versions of the run (result.json)
_VERSIONS = re.compile(r'"versions": \{[^{}]*\}')
# what a progress reporter prints to a CI log: "suite: callable: 3/50", "... 50/50 in 0.1s"
_PROGRESS = re.compile(r"^[^\n]*: \d+/\d+(?: \([^)]*\))?(?: in <D>s)?[^\n]*$\n?", re.M)


def normalise(text: str, root: Path) -> str:
    """Replace what differs from run to run (times, paths, versions, ports) by placeholders."""
    for path in {str(root.resolve()), str(root)}:
        text = text.replace(path, "<ROOT>")
    text = text.replace(sys.executable, "<PYTHON>")
    text = _TIME.sub("<TIME>", text)
    text = _JUNIT_TIME.sub('time="<T>"', text)
    text = _DURATION.sub(lambda m: f"{m.group(1)} <D>s", text)
    text = _IDENTITY.sub('"system": "<IDENTITY>"', text)
    text = _PORT.sub(lambda m: f"{m.group(1)}:<PORT>", text)
    text = _CRASH.sub("crash-<ID>.txt", text)
    text = _VERSIONS.sub('"versions": "<VERSIONS>"', text)
    version = re.escape(goldgate.__version__)
    return re.sub(rf"(?<![\w.]){version}(?![\w.])", "<VERSION>", text)


def _strip_progress(text: str) -> str:
    return _PROGRESS.sub("", text)


@dataclass
class CorpusProject:
    """A case's directory, its environment and what it collected."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    _log: list[str] = field(default_factory=list)

    # -- files -----------------------------------------------------------------------------
    def write(self, name: str, text: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        # outside git a command's fingerprint holds its files' modification times
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
        return path

    def write_rows(self, name: str, rows: list[Mapping[str, Any]]) -> Path:
        return self.write(name, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))

    def rows(self, name: str) -> list[dict[str, Any]]:
        text = (self.root / name).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def example_rows(self, suite: str, count: int | None = None) -> list[dict[str, Any]]:
        """The bundled example's golden records of ``suite`` (the first ``count``)."""
        text = (REPO / "goldens" / f"{suite}.jsonl").read_text(encoding="utf-8")
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        return rows[:count] if count is not None else rows

    # -- commands --------------------------------------------------------------------------
    def _environment(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "GOLDGATE_", "GITLAB_", "PYTEST_"))
        }
        env.update({"CI": "true", "PYTHONHASHSEED": "0", "COLUMNS": "100", "TZ": "UTC"})
        env.update(GIT_ENV)
        env.update(self.env)
        return env

    def goldgate(self, *args: str, expect: int | None = None) -> int:
        """Run ``goldgate ARGS`` here; its exit code and normalised output go to the log."""
        done = subprocess.run(
            [*GOLDGATE, *args],
            cwd=self.root,
            env=self._environment(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        stdout = normalise(done.stdout, self.root)
        stderr = _strip_progress(normalise(done.stderr, self.root))
        self._log.append(
            f"$ goldgate {' '.join(args)}\n[exit {done.returncode}]\n"
            f"--- stdout\n{stdout}--- stderr\n{stderr}--- end\n"
        )
        if expect is not None and done.returncode != expect:
            raise AssertionError(
                f"goldgate {' '.join(args)} exited {done.returncode}, the case expects"
                f" {expect}\n{done.stdout}\n{done.stderr}"
            )
        return done.returncode

    def git(self, *args: str) -> None:
        subprocess.run(
            ["git", *args],
            cwd=self.root,
            env=self._environment(),
            check=True,
            capture_output=True,
            text=True,
        )

    def commit(self, message: str, when: int) -> None:
        """Commit everything at a fixed time (``when`` seconds into 2026), so hashes repeat."""
        stamp = f"{1767225600 + when} +0000"
        self.env.update({"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)

    # -- what is kept ----------------------------------------------------------------------
    def keep(self, name: str, text: str) -> None:
        data = normalise(text, self.root)
        if len(data.encode()) > DIGEST_ABOVE:
            digest = hashlib.sha256(data.encode()).hexdigest()
            self.files[f"{name}.sha256"] = f"{digest}  {len(data.encode())} bytes\n"
        else:
            self.files[name] = data

    def capture(self, label: str, *, baseline: str = "goldgate.baseline.json") -> None:
        """Keep the reports and the baseline as they are now, then remove the reports."""
        report_dir = self.root / "goldgate-report"
        for name, relative in REPORT_FILES.items():
            path = self.root / relative
            if path.is_file():
                self.keep(f"{label}/{name}", path.read_text(encoding="utf-8"))
        side = report_dir / "examples.jsonl.gz"
        if side.is_file():
            self.keep(f"{label}/examples.jsonl", gzip.decompress(side.read_bytes()).decode())
        base = self.root / baseline
        if base.is_file():
            self.keep(f"{label}/baseline.json", base.read_text(encoding="utf-8"))
        if report_dir.exists():
            shutil.rmtree(report_dir)

    def finish(self) -> dict[str, str]:
        self.files["commands.txt"] = "".join(self._log)
        return self.files


Case = Callable[[CorpusProject], None]


def run_case(case: Case, name: str) -> dict[str, str]:
    """Run ``case`` in a fresh directory; every collected file by name.

    The directory's name has letters, digits and dashes only, whatever the case: a path is
    shown escaped or not by its characters (Markdown), so every run must have paths alike.
    """
    root = Path(tempfile.gettempdir()).resolve() / f"goldgate-corpus-{os.getpid()}"
    root = root / re.sub(r"[^a-z0-9]+", "-", name.lower())
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    try:
        project = CorpusProject(root)
        case(project)
        return project.finish()
    finally:
        shutil.rmtree(root, ignore_errors=True)


#: the Python the corpus was recorded with: another version's argparse and float sums may
#: print other bytes, so the corpus is compared on that version only (CI runs it there)
PYTHON_FILE = RECORDED / "PYTHON"


def python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def recorded(name: str) -> dict[str, str]:
    """What was recorded for the case ``name``."""
    folder = RECORDED / name
    return {
        path.relative_to(folder).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def write_recording(name: str, files: Mapping[str, str], into: Path = RECORDED) -> None:
    """Write a case's files as ``into/<case>/...``, replacing what was there."""
    folder = into / name
    if folder.exists():
        shutil.rmtree(folder)
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
