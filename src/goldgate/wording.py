"""How counts and p-values are written: once, so every message, report and table agree.

``1 bless`` and ``2 blesses``, never ``1 blesses``; ``p = 0.004`` and ``p < 0.001``, never
``p = <0.001`` nor ``p=0.004``. This module imports nothing from goldgate, so the gate, the
reports and every face can use it.
"""

from __future__ import annotations

import math

#: p-values are shown to three decimals; below this, as ``< 0.001``
P_FLOOR = 0.001
_P_DECIMALS = 3
_DASH = "\u2014"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 example``, ``2 examples``, ``1 bless``, ``3 blesses``, ``1,204 examples``.

    ``many`` is the plural when adding ``s`` (``es`` after s, x, z, ch, sh) does not make it.
    """
    if n == 1:
        return f"{n:,} {word}"
    if many is None:
        many = word + ("es" if word.endswith(("s", "x", "z", "ch", "sh")) else "s")
    return f"{n:,} {many}"


#: decimals of a score or delta in points (on the 0-100 scale)
DECIMALS = 2
#: the most decimals a change is ever shown with; below 10**-MAX_DECIMALS it is "unchanged"
MAX_DECIMALS = 9


def change_decimals(delta: float, decimals: int = DECIMALS) -> int | None:
    """The decimals that show ``delta`` as a change: ``decimals``, more when it would round to
    zero (``0.004`` needs 3), ``None`` when it is no change at all (zero or float noise).

    So a message never says "rose 0.00 points", and a change goes on showing at all.
    """
    size = abs(delta)
    if not math.isfinite(size):
        return decimals
    for places in range(decimals, MAX_DECIMALS + 1):
        # The bounds differ once the change is a whole unit of the last place shown.
        if size >= 10.0**-places:
            return places
    return None


def p_value(p: float | None) -> str:
    """A p-value for a column headed ``p``: ``0.004``, ``<0.001``, an em dash when absent."""
    if p is None or not math.isfinite(p):
        return _DASH
    if p < P_FLOOR:
        return f"<{P_FLOOR:.{_P_DECIMALS}f}"
    return f"{p:.{_P_DECIMALS}f}"


def p_is(p: float) -> str:
    """A p-value in a sentence: ``p = 0.004`` or ``p < 0.001``."""
    shown = p_value(p)
    return f"p < {shown[1:]}" if shown.startswith("<") else f"p = {shown}"
