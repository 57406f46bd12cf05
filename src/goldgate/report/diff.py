"""Word-level diff of a baseline output against the current one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

DiffKind = Literal["equal", "insert", "delete"]

# Each token is a word with the whitespace before it, so joining tokens restores the text.
_TOKEN = re.compile(r"\s*\S+|\s+")

# SequenceMatcher is quadratic in the worst case; past this many token pairs a diff is not
# worth reading anyway, so the whole text is shown as replaced.
_MAX_PAIRS = 25_000_000


@dataclass(frozen=True)
class DiffOp:
    """One run of the diff; ``old`` is the baseline's spelling of an equal run when it differs
    from the current one only in whitespace."""

    kind: DiffKind
    text: str
    old: str | None = None


def tokenize(text: str) -> list[str]:
    """Split text into words, each carrying the whitespace before it."""
    return _TOKEN.findall(text)


def word_diff(old: str, new: str) -> list[DiffOp]:
    """Word-level diff: joining equal and insert runs gives ``new``; equal (its ``old``
    spelling when set) and delete runs give ``old``."""
    if old == new:  # the common case: most outputs do not change between runs
        return [DiffOp("equal", new)] if new else []
    a, b = tokenize(old), tokenize(new)
    ops: list[DiffOp] = []
    if len(a) * len(b) > _MAX_PAIRS:
        _append(ops, DiffOp("delete", old))
        _append(ops, DiffOp("insert", new))
        return ops
    matcher = SequenceMatcher(None, [t.strip() for t in a], [t.strip() for t in b], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            old_run, new_run = "".join(a[i1:i2]), "".join(b[j1:j2])
            if old_run == new_run:
                _append(ops, DiffOp("equal", new_run))
                continue
            for old_tok, new_tok in zip(a[i1:i2], b[j1:j2], strict=True):
                _append(ops, DiffOp("equal", new_tok, None if old_tok == new_tok else old_tok))
            continue
        if tag in ("delete", "replace"):
            _append(ops, DiffOp("delete", "".join(a[i1:i2])))
        if tag in ("insert", "replace"):
            _append(ops, DiffOp("insert", "".join(b[j1:j2])))
    return ops


def _append(ops: list[DiffOp], op: DiffOp) -> None:
    if not op.text:
        return
    if ops and ops[-1].kind == op.kind and ops[-1].old is None and op.old is None:
        ops[-1] = DiffOp(op.kind, ops[-1].text + op.text)
    else:
        ops.append(op)


def new_text(ops: Sequence[DiffOp]) -> str:
    """The current text a diff was made from."""
    return "".join(op.text for op in ops if op.kind != "delete")


def old_text(ops: Sequence[DiffOp]) -> str:
    """The baseline text a diff was made from."""
    return "".join((op.old if op.old is not None else op.text) for op in ops if op.kind != "insert")
