"""Helpers to make goldgate crash on purpose, in process or in a real ``goldgate`` process."""

from __future__ import annotations

from pathlib import Path

SITECUSTOMIZE = """
import importlib, os
module_name, _, attribute = os.environ["GOLDGATE_TEST_CRASH"].partition(":")
module = importlib.import_module(module_name)

def _crash(*args, **kwargs):
    raise ZeroDivisionError("injected by the test")

setattr(module, attribute, _crash)
"""


def crash_env(scratch: Path, target: str) -> dict[str, str]:
    """Environment for a subprocess in which ``module:function`` raises ZeroDivisionError.

    A ``sitecustomize`` on PYTHONPATH replaces the function before goldgate runs: the only
    way to reach a true internal error once every known one is fixed.
    """
    folder = scratch / "crash-inject"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return {"PYTHONPATH": str(folder), "GOLDGATE_TEST_CRASH": target}
