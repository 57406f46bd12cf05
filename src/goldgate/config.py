"""``goldgate.config`` is now :mod:`goldgate.model.config`; the old path keeps working.

Each name is looked up in the new module on first use, for code that imports it from here.
"""

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    return getattr(importlib.import_module("goldgate.model.config"), name)
