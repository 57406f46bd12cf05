"""The import paths users are told about keep working, wherever the code behind them lives.

The README and the docs name ``goldgate.run``, ``goldgate.load_config``, ``goldgate.config``,
``goldgate.result`` and ``goldgate.metrics.base.Metric``; pip installs the pytest plugins and
the command through entry points. Moving a module inside the package must not break any of
them: these tests import each one as a user would.
"""

from __future__ import annotations

import importlib
import inspect
from importlib.metadata import entry_points
from types import ModuleType

import pytest

import goldgate
import goldgate.config
import goldgate.result

#: each name of the lazy API of ``goldgate`` and the module that defines it
API = {
    "load_config": "goldgate.model.config_loading",
    "Config": "goldgate.model.config",
    "RunResult": "goldgate.model.result",
    "Verdict": "goldgate.model.result",
    "run": "goldgate.runner",
    "bless": "goldgate.runner",
    "check": "goldgate.runner",
}


@pytest.mark.parametrize("name", sorted(API))
def test_the_library_api_resolves_to_where_each_name_lives(name: str) -> None:
    value = getattr(goldgate, name)
    assert value is getattr(importlib.import_module(API[name]), name)
    assert name in goldgate.__all__
    assert value.__module__ == API[name]


def test_an_unknown_name_of_goldgate_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        goldgate.no_such_name  # noqa: B018


def test_the_documented_imports_work() -> None:
    from goldgate.config import Config, load_config
    from goldgate.metrics.base import Metric
    from goldgate.result import example_table

    assert load_config is goldgate.load_config
    assert Config is goldgate.Config
    assert callable(example_table)
    assert inspect.isclass(Metric)
    systems = importlib.import_module("goldgate.examples.systems")
    assert systems.__name__ == "goldgate.examples.systems"


@pytest.mark.parametrize("shim", [goldgate.config, goldgate.result], ids=lambda m: m.__name__)
def test_the_old_module_paths_forward_every_public_name(shim: ModuleType) -> None:
    """Every public name of the modules the old ``goldgate.config`` / ``goldgate.result``
    became resolves from the old path, to the same object (the first module that has it)."""
    modules = [importlib.import_module(name) for name in shim.MODULES]
    for module in modules:
        for name in dir(module):
            if name.startswith("_"):
                continue
            owner = next(m for m in modules if hasattr(m, name))
            assert getattr(shim, name) is getattr(owner, name), f"{shim}.{name}"


@pytest.mark.parametrize(
    ("shim", "name"),
    [
        (goldgate.config, "load_config"),
        (goldgate.config, "parse_config"),
        (goldgate.config, "config_json_schema"),
        (goldgate.config, "SystemConfig"),
        (goldgate.result, "example_table"),
        (goldgate.result, "ExampleColumns"),
        (goldgate.result, "EXAMPLES_FILE"),
        (goldgate.result, "SuiteResult"),
    ],
)
def test_names_that_moved_out_of_the_old_modules_still_resolve(shim: ModuleType, name: str) -> None:
    assert getattr(shim, name) is not None


@pytest.mark.parametrize("shim", [goldgate.config, goldgate.result], ids=lambda m: m.__name__)
def test_an_unknown_name_of_an_old_path_is_an_attribute_error(shim: ModuleType) -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        shim.no_such_name  # noqa: B018


@pytest.mark.parametrize("name", ["goldgate", "goldgate_guard"])
def test_the_pytest_plugins_entry_points_load(name: str) -> None:
    (point,) = [e for e in entry_points(group="pytest11") if e.name == name]
    plugin = point.load()
    assert plugin.__name__ == point.value


def test_the_console_script_entry_point_loads() -> None:
    (point,) = [e for e in entry_points(group="console_scripts") if e.name == "goldgate"]
    assert callable(point.load())
