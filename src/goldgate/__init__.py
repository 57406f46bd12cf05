"""goldgate: a regression gate for text-generation quality.

The library API that the command line, the pytest plugin and the GitHub Action all call::

    import goldgate

    config = goldgate.load_config()            # goldgate.yaml or [tool.goldgate]
    result = goldgate.run(config)              # a RunResult; result.verdict, result.exit_code
    goldgate.bless(config)                     # write the baseline from today's scores

Names are imported lazily, so ``import goldgate`` stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from goldgate._version import __version__

if TYPE_CHECKING:
    from goldgate.model.config import Config
    from goldgate.model.config_loading import load_config
    from goldgate.model.result import RunResult, Verdict
    from goldgate.runner import bless, check, run

__all__ = [
    "Config",
    "RunResult",
    "Verdict",
    "__version__",
    "bless",
    "check",
    "load_config",
    "run",
]

_LAZY = {
    "Config": "goldgate.model.config",
    "load_config": "goldgate.model.config_loading",
    "RunResult": "goldgate.model.result",
    "Verdict": "goldgate.model.result",
    "run": "goldgate.runner",
    "bless": "goldgate.runner",
    "check": "goldgate.runner",
}


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'goldgate' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
