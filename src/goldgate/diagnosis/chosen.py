"""The detectors a configuration runs: the built-ins it does not disable (``length_drift``
with its configured threshold), then the project's own, each checked to be a detector."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from goldgate.diagnosis.detector import Detector
from goldgate.diagnosis.registry import detectors
from goldgate.errors import ConfigError, did_you_mean


def _with_options(detector: Detector, options: dict[str, Any]) -> Detector:
    """``detector`` built again with ``options`` when its class takes them as keyword
    arguments (``LengthDrift(ratio=...)``); as it is when it has none to take."""
    if not options:
        return detector
    cls = type(detector)
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return detector
    if all(name in parameters for name in options):
        made: Detector = cls(**options)
        return made
    return detector


def chosen_detectors(
    *, disable: Sequence[str], extra: Sequence[str], length_drift: dict[str, Any]
) -> tuple[Detector, ...]:
    """The detectors to run, in order; a project's detector that does not import, or is not
    a detector (``name``, ``version``, callable), is a ``ConfigError`` naming it."""
    try:
        found = list(detectors(disabled=disable))
    except (ImportError, AttributeError) as exc:  # a built-in that does not import: ours
        raise RuntimeError(f"a built-in detector does not import: {exc}") from exc
    found = [_with_options(d, length_drift) if d.name == "length_drift" else d for d in found]
    for spec in extra:
        try:
            (detector,) = detectors(disabled=[*_builtin_names()], extra=[spec])
        except ImportError as exc:
            raise ConfigError(f"diagnose.detectors: cannot import {spec!r}: {exc}") from None
        except AttributeError:
            module = spec.partition(":")[0]
            raise ConfigError(
                f"diagnose.detectors: {module!r} has no {spec.partition(':')[2]!r}"
            ) from None
        except Exception as exc:  # importing a project's module ran its code
            raise ConfigError(
                f"diagnose.detectors: importing {spec!r} failed: {type(exc).__name__}: {exc}"
            ) from None
        name = getattr(detector, "name", None)
        version = getattr(detector, "version", None)
        if (
            not isinstance(name, str)
            or not name
            or not isinstance(version, int)
            or not callable(detector)
        ):
            raise ConfigError(
                f"diagnose.detectors: {spec!r} is not a detector: it needs a `name` (a string),"
                " a `version` (an int) and `__call__(example, context)`"
            )
        found.append(detector)
    names = [d.name for d in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"diagnose.detectors: two detectors are named {twice[0]!r}")
    return tuple(found)


def _builtin_names() -> list[str]:
    from goldgate.diagnosis.registry import builtin_detector_names

    return builtin_detector_names()


def check_categories(wanted: Sequence[str], chosen: Sequence[Detector], suite: str) -> None:
    """A ``max_new`` that names a category no chosen detector finds is a ``ConfigError``."""
    names = [d.name for d in chosen]
    for category in wanted:
        if category not in names:
            raise ConfigError(
                f"suites.{suite}.max_new names {category!r}, which no detector finds"
                f"{did_you_mean(category, names)}; the categories: {', '.join(names)}"
            )


def detector_identity(detector: Detector) -> str:
    """What a detector's answers depend on: its class, name, version and settings (a cache
    of its answers, or the blessed side's stored with a baseline, holds only for the same)."""
    state = repr(sorted(vars(detector).items())) if hasattr(detector, "__dict__") else ""
    kind = type(detector)
    return f"{kind.__module__}.{kind.__qualname__}:{detector.name}:{detector.version}:{state}"
