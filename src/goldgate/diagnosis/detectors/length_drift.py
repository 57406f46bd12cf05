"""``length_drift``: the output's length, relative to its references, moved far from the
blessed output's.

Lengths are in characters, without surrounding space; the references' length is their mean.
Present when the current and blessed outputs' lengths differ by a factor of at least ``ratio``
and by at least ``min_chars`` characters, and the current one is the further from the
references (it moved away from them, not towards them). Needs the blessed output: None on the
blessed side, when the baseline kept no outputs, and for an empty output (``empty`` says it).
"""

from __future__ import annotations

import math

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import bounded

#: The default factor between the current and the blessed output's lengths.
RATIO = 2.0
#: The default smallest difference, in characters, that counts.
MIN_CHARS = 20


class LengthDrift:
    name = "length_drift"
    version = 1
    same_when_unchanged = True

    def __init__(self, ratio: float = RATIO, min_chars: int = MIN_CHARS) -> None:
        if not ratio > 1.0 or not math.isfinite(ratio):
            raise ValueError(f"length_drift's ratio must be a finite number above 1, not {ratio!r}")
        if min_chars < 0:
            raise ValueError(f"length_drift's min_chars must be 0 or more, not {min_chars!r}")
        self.ratio = float(ratio)
        self.min_chars = int(min_chars)
        self._log_ratio = math.log(self.ratio)

    def __repr__(self) -> str:
        return f"LengthDrift(ratio={self.ratio!r}, min_chars={self.min_chars!r})"

    def __call__(self, example: Example, context: SideContext) -> str | None:
        blessed = example.blessed
        if blessed is None:
            return None
        now = len(example.output.strip())
        before = len(blessed.strip())
        if now == 0 or before == 0 or abs(now - before) < self.min_chars:
            return None
        if abs(math.log(now / before)) < self._log_ratio:
            return None
        references = [len(reference.strip()) for reference in example.references]
        target = sum(references) / len(references) if references else 0.0
        if target > 0 and abs(math.log(now / target)) <= abs(math.log(before / target)):
            return None
        if target > 0:
            return bounded(
                f"{now / target:.1f}× the references' length (blessed {before / target:.1f}×)"
            )
        return bounded(f"{now / before:.1f}× the blessed output's length")


LENGTH_DRIFT = LengthDrift()
