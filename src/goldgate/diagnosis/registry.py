"""Find detectors by name: the built-ins, and a user's ``module:attribute``."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from goldgate.diagnosis.detector import Detector

# name -> "module:attribute" of a Detector instance; imported on first use.
_BUILTINS: dict[str, str] = {
    "empty": "goldgate.diagnosis.detectors.empty:EMPTY",
    "truncated": "goldgate.diagnosis.detectors.truncated:TRUNCATED",
    "repetition": "goldgate.diagnosis.detectors.repetition:REPETITION",
    "refusal": "goldgate.diagnosis.detectors.refusal:REFUSAL",
    "language_switch": "goldgate.diagnosis.detectors.language_switch:LANGUAGE_SWITCH",
    "format_break": "goldgate.diagnosis.detectors.format_break:FORMAT_BREAK",
    "number_change": "goldgate.diagnosis.detectors.number_change:NUMBER_CHANGE",
    "copied_input": "goldgate.diagnosis.detectors.copied_input:COPIED_INPUT",
    # The default thresholds; a configured one is ``LengthDrift(ratio=..., min_chars=...)``.
    "length_drift": "goldgate.diagnosis.detectors.length_drift:LENGTH_DRIFT",
    "surface_only": "goldgate.diagnosis.detectors.surface_only:SURFACE_ONLY",
}


def builtin_detector_names() -> list[str]:
    """Names of the detectors goldgate ships, in the order reports list them."""
    return list(_BUILTINS)


def _load(spec: str) -> Detector:
    module, _, attribute = spec.partition(":")
    found: Detector = getattr(importlib.import_module(module), attribute)
    return found


def detectors(*, disabled: Iterable[str] = (), extra: Iterable[str] = ()) -> tuple[Detector, ...]:
    """The built-ins that are not ``disabled``, then each ``module:attribute`` in ``extra``."""
    off = set(disabled)
    chosen = [_load(spec) for name, spec in _BUILTINS.items() if name not in off]
    chosen.extend(_load(spec) for spec in extra)
    return tuple(chosen)
