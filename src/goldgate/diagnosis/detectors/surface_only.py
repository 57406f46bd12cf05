"""``surface_only``: the output differs from the blessed one only in case, whitespace or
punctuation, so the regression is one of formatting, not content.

Needs the blessed output: None on the blessed side, or when the baseline kept no outputs.
"""

from __future__ import annotations

import regex

from goldgate.diagnosis.detector import Example, SideContext

_SPACE = regex.compile(r"\s+")
_PUNCTUATION = regex.compile(r"[\p{P}\p{S}]+")


def _kinds(output: str, blessed: str) -> list[str] | None:
    """What separates the two texts, when it is only case, whitespace and punctuation."""
    output_unspaced = _SPACE.sub("", output)
    blessed_unspaced = _SPACE.sub("", blessed)
    output_bare = _PUNCTUATION.sub("", output_unspaced)
    blessed_bare = _PUNCTUATION.sub("", blessed_unspaced)
    if output_bare.casefold() != blessed_bare.casefold():
        return None
    kinds = []
    if output_bare != blessed_bare:
        kinds.append("case")
    if output_unspaced.casefold() != blessed_unspaced.casefold():
        kinds.append("punctuation")
    if _SPACE.findall(output) != _SPACE.findall(blessed):
        kinds.append("whitespace")
    return kinds


class SurfaceOnly:
    name = "surface_only"
    version = 1
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        blessed = example.blessed
        output = example.output
        if blessed is None or output == blessed:
            return None
        kinds = _kinds(output, blessed)
        if kinds is None:
            return None
        return "only " + ", ".join(kinds) + " changed"


SURFACE_ONLY = SurfaceOnly()
