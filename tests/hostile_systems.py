"""Systems for the output-layer tests: they hand goldgate whatever hostile text they are given."""

from __future__ import annotations

from typing import Any


def echo(input: Any) -> str:
    """Return the record's ``output`` (hostile text chosen by the test)."""
    return str(input["output"])


def fail(input: Any) -> str:
    """Raise with the record's ``output`` as the exception message."""
    raise RuntimeError(str(input["output"]))
