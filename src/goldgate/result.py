"""``goldgate.result`` is now :mod:`goldgate.model.result` and the modules beside it; the old
path keeps working.

Each name is looked up on first use, for code that imports it from here, in the modules that
the old ``goldgate.result`` became, in this order: the result's models, the example rows and
tables, the examples side file.
"""

from goldgate.model.moved import forwarding

#: where the names of the old module live now
MODULES = (
    "goldgate.model.result",
    "goldgate.model.example_table",
    "goldgate.model.examples_file",
)


__getattr__ = forwarding(__name__, MODULES)
