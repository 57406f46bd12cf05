"""``goldgate.result`` is now :mod:`goldgate.model.result` and the modules beside it; the old
path keeps working.

Each name is looked up on first use, for code that imports it from here, in the modules that
the old ``goldgate.result`` became, in this order: the result's models, the example rows and
tables, the examples side file.
"""

import importlib
from typing import Any

#: where the names of the old module live now
MODULES = (
    "goldgate.model.result",
    "goldgate.model.example_table",
    "goldgate.model.examples_file",
)


def __getattr__(name: str) -> Any:
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
