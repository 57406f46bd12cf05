"""``goldgate.config`` is now :mod:`goldgate.model.config` and the modules beside it; the old
path keeps working.

Each name is looked up on first use, for code that imports it from here, in the modules that
the old ``goldgate.config`` became, in this order: the models, loading the files, the wording
of validation errors, the JSON Schema.
"""

from goldgate.model.moved import forwarding

#: where the names of the old module live now
MODULES = (
    "goldgate.model.config",
    "goldgate.model.config_loading",
    "goldgate.model.config_errors",
    "goldgate.model.config_schema",
)


__getattr__ = forwarding(__name__, MODULES)
