"""``goldgate.result`` is now :mod:`goldgate.model.result`; the old path keeps working.

Each name is looked up in the new module on first use, for code that imports it from here.
"""

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    return getattr(importlib.import_module("goldgate.model.result"), name)
