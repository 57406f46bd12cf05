"""``empty``: the output is empty or whitespace only."""

from __future__ import annotations

from goldgate.diagnosis.detector import Example, SideContext


class Empty:
    name = "empty"
    version = 1
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        if example.output.strip():
            return None
        return "empty output" if not example.output else "whitespace only"


EMPTY = Empty()
