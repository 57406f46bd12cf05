"""Clusters: the regressed examples no detector explains, grouped by what they newly share
(a distinctive opening, a phrase their blessed outputs did not have), so that the reviewer
reads "12 now begin with 'Sure! Here is'".

Deterministic (ties broken by length, kind and text) and bounded: at most
:data:`MAX_EXAMPLES` examples are read, :data:`MAX_WORDS` words of each, and at most
:data:`MAX_CLUSTERS` clusters of :data:`MAX_IDS` ids each are kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from goldgate.model.diagnosis import Cluster

MAX_EXAMPLES = 2000
MAX_WORDS = 200
MAX_CLUSTERS = 5
MAX_IDS = 20
#: a cluster holds at least this many examples, and at least this share of those read
MIN_COUNT = 2
MIN_SHARE = 0.1
#: words of a shared opening, longest first; words of a shared phrase
OPENINGS = (5, 4, 3, 2)
PHRASE = 3
#: the most characters of a pattern kept
MAX_PATTERN = 60


@dataclass(frozen=True)
class Unexplained:
    """One regressed example no detector explains."""

    id: str
    output: str
    blessed: str | None


def _escape(char: str) -> str:
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code <= 0xFF
        else f"\\u{code:04x}"
        if code <= 0xFFFF
        else f"\\U{code:08x}"
    )


def printable(text: str, limit: int = MAX_PATTERN) -> str:
    """``text`` with every character that is not printable written as an escape, cut to
    ``limit`` characters: a pattern is model output, shown in every report."""
    shown = "".join(c if c.isprintable() else _escape(c) for c in text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _candidates(item: Unexplained) -> set[tuple[str, str]]:
    words = item.output.split()[:MAX_WORDS]
    old_words = (item.blessed or "").split()[: MAX_WORDS + PHRASE]
    found: set[tuple[str, str]] = set()
    for size in OPENINGS:
        if len(words) >= size and words[:size] != old_words[:size]:
            found.add(("opening", " ".join(words[:size])))
    folded = [w.casefold() for w in words]
    old = {tuple(w.casefold() for w in old_words[i : i + PHRASE]) for i in range(len(old_words))}
    for i in range(len(folded) - PHRASE + 1):
        gram = tuple(folded[i : i + PHRASE])
        if gram not in old:
            found.add(("phrase", " ".join(gram)))
    return found


def find_clusters(items: Sequence[Unexplained]) -> list[Cluster]:
    """The clusters of ``items`` (the first :data:`MAX_EXAMPLES`), largest first."""
    items = items[:MAX_EXAMPLES]
    members: dict[tuple[str, str], list[int]] = {}
    for index, item in enumerate(items):
        for key in _candidates(item):
            members.setdefault(key, []).append(index)
    floor = max(MIN_COUNT, math.ceil(MIN_SHARE * len(items)))
    taken: set[int] = set()
    clusters: list[Cluster] = []
    while len(clusters) < MAX_CLUSTERS and members:
        best: tuple[int, int, int, str] | None = None
        best_key: tuple[str, str] | None = None
        for key, indices in members.items():
            count = sum(1 for i in indices if i not in taken)
            if count < floor:
                continue
            # most examples, then the longest pattern, then an opening, then by text
            rank = (-count, -len(key[1].split()), 0 if key[0] == "opening" else 1, key[1])
            if best is None or rank < best:
                best, best_key = rank, key
        if best_key is None:
            break
        chosen = [i for i in members.pop(best_key) if i not in taken]
        taken.update(chosen)
        clusters.append(
            Cluster(
                pattern=printable(best_key[1]),
                kind="opening" if best_key[0] == "opening" else "phrase",
                count=len(chosen),
                ids=[items[i].id for i in chosen[:MAX_IDS]],
            )
        )
        members = {k: v for k, v in members.items() if any(i not in taken for i in v)}
    return clusters
