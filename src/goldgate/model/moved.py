"""The documented import paths whose modules moved into ``model/``, kept working.

``goldgate.config`` and ``goldgate.result`` each became several modules here; the old module
answers an attribute lookup from the new ones, in order, on first use.
"""

import importlib
from collections.abc import Callable, Sequence
from typing import Any


def forwarding(old: str, modules: Sequence[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``old`` that finds each name in ``modules``."""

    def __getattr__(name: str) -> Any:
        for module_name in modules:
            module = importlib.import_module(module_name)
            if hasattr(module, name):
                return getattr(module, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__
