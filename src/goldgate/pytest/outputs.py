"""The outputs a pytest session evaluates, and the systems that replay them.

A system's outputs are obtained once (:func:`obtain`) and written to a predictions file
(:func:`write_predictions`) that the run, the gate and the bless all read back through a
configuration whose systems are replaced (:func:`with_systems`). A fixture or marker check
names its system as a Python callable, a ``module:function`` path or settings
(:func:`system_settings`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldgate.errors import GoldgateError, did_you_mean

if TYPE_CHECKING:
    # Imported where used: the plugin is imported by every pytest run in an environment that
    # has goldgate installed, and pydantic models cost a noticeable part of a second.
    from goldgate.model.config import Config, SystemConfig

#: System settings a fixture check may override (the source is given by ``system=``).
SYSTEM_OVERRIDES = ("concurrency", "timeout_s", "samples", "env")

#: What a fixture check evaluates: a Python callable, a ``module:function`` path, or the
#: settings of a system (``{"predictions": "out/{suite}.jsonl"}``).
SystemSpec = Callable[..., Any] | str | Mapping[str, Any]


def obtain(
    config: Config,
    suite: str,
    system: SystemConfig,
    *,
    function: Callable[..., Any] | None = None,
) -> dict[str, list[str]]:
    """The outputs of ``system`` (or of the Python ``function``) for every golden record."""
    from goldgate.model.goldens import load_goldens
    from goldgate.systems.cache import input_hash
    from goldgate.systems.callable import run_callable
    from goldgate.systems.calls import Call
    from goldgate.systems.obtain import obtain_outputs

    golden = load_goldens(config.suites[suite].goldens, suite)
    if function is None:
        return obtain_outputs(system, golden, root=config.root, cache_dir=config.cache_dir)
    outputs: dict[str, list[str]] = {r.id: [""] * system.samples for r in golden.records}
    calls = [
        Call(record, sample, (record.id, input_hash(record.input), sample))
        for record in golden.records
        for sample in range(system.samples)
    ]

    def deliver(call: Call, output: str) -> None:
        outputs[call.record.id][call.sample] = output

    run_callable(function, calls, deliver, system=system)
    return outputs


def system_settings(
    configured: SystemConfig, system: SystemSpec | None, overrides: Mapping[str, Any]
) -> tuple[Callable[..., Any] | None, SystemConfig]:
    """The system a fixture check runs: a Python function (or None) and its settings."""
    from goldgate.model.config import SystemConfig

    for key in overrides:
        if key not in SYSTEM_OVERRIDES:
            raise TypeError(
                f"goldgate.check() got an unexpected keyword {key!r}"
                f"{did_you_mean(key, SYSTEM_OVERRIDES)}; it takes system= and "
                f"{', '.join(SYSTEM_OVERRIDES)}"
            )
    data = configured.model_dump()
    data.update(overrides)
    function: Callable[..., Any] | None = None
    if system is not None:
        for source in ("predictions", "command", "callable"):
            data[source] = None
        if isinstance(system, str):
            data["callable"] = system
        elif isinstance(system, Mapping):
            data.update(system)
        elif callable(system):
            function = system
            # A placeholder passes validation; the label below is what error messages show.
            data["callable"] = "goldgate_check:function"
        else:
            raise TypeError(
                f"system= must be a callable, 'module:function' or a mapping, not "
                f"{type(system).__name__}"
            )
    try:
        settings = SystemConfig.model_validate(data)
    except ValueError as exc:
        raise GoldgateError(f"goldgate.check(): invalid system settings: {exc}") from None
    if function is not None:
        label = getattr(function, "__qualname__", None) or type(function).__name__
        module = getattr(function, "__module__", None) or "?"
        settings = settings.model_copy(update={"callable": f"{module}:{label}", "cache": "off"})
    return function, settings


def write_predictions(path: Path, outputs: Mapping[str, Sequence[str]]) -> SystemConfig:
    """Write outputs as a predictions file and return the system that reads it back."""
    from goldgate.model.config import SystemConfig

    samples = len(next(iter(outputs.values()), [""]))
    with path.open("w", encoding="utf-8") as handle:
        for example_id, texts in outputs.items():
            row: dict[str, Any] = {"id": example_id}
            if samples == 1:
                row["output"] = texts[0]
            else:
                row["outputs"] = list(texts)
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return SystemConfig(predictions=str(path), samples=samples)


def with_systems(config: Config, systems: Mapping[str, SystemConfig]) -> Config:
    """``config`` with the named suites' systems replaced."""
    suites = {
        name: suite.model_copy(update={"system": systems[name]}) if name in systems else suite
        for name, suite in config.suites.items()
    }
    return config.model_copy(update={"suites": suites})
