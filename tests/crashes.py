"""Helpers to make goldgate crash on purpose, in process or in a real ``goldgate`` process."""

from __future__ import annotations

from pathlib import Path

SITECUSTOMIZE = """
import importlib, os
module_name, _, attribute = os.environ["GOLDGATE_TEST_CRASH"].partition(":")
module = importlib.import_module(module_name)

# What pyo3 raises for a Rust panic (a tokenizer's): a BaseException, not an Exception.
class PanicException(BaseException):
    pass


def _crash(*args, **kwargs):
    if os.environ.get("GOLDGATE_TEST_CRASH_KIND") == "panic":
        raise PanicException("injected by the test")
    raise ZeroDivisionError("injected by the test")

setattr(module, attribute, _crash)
"""


#: what each kind of injected crash says: an Exception, or a BaseException that is not one
CRASH_TEXT = {
    "error": "ZeroDivisionError: injected by the test",
    "panic": "PanicException: injected by the test",
}


def crash_env(scratch: Path, target: str, kind: str = "error") -> dict[str, str]:
    """Environment for a subprocess in which ``module:function`` raises ZeroDivisionError.

    With ``kind="panic"`` it raises a ``PanicException`` (a ``BaseException``) instead, as a
    Rust tokenizer does when it panics.

    A ``sitecustomize`` on PYTHONPATH replaces the function before goldgate runs: the only
    way to reach a true internal error once every known one is fixed.
    """
    folder = scratch / "crash-inject"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    return {
        "PYTHONPATH": str(folder),
        "GOLDGATE_TEST_CRASH": target,
        "GOLDGATE_TEST_CRASH_KIND": kind,
    }
