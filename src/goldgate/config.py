"""``goldgate.config`` is now :mod:`goldgate.model.config` and the modules beside it; the old
path keeps working.

Each name is looked up on first use, for code that imports it from here, in the modules that
the old ``goldgate.config`` became, in this order: the models, loading the files, the wording
of validation errors, the JSON Schema.
"""

import importlib
from typing import Any

#: where the names of the old module live now
MODULES = (
    "goldgate.model.config",
    "goldgate.model.config_loading",
    "goldgate.model.config_errors",
    "goldgate.model.config_schema",
)


def __getattr__(name: str) -> Any:
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
