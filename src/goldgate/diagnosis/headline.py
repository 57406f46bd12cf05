"""The headline: one sentence saying why quality fell, first in every report.

``31 of 40 regressed examples are now empty (0 before); 6 switched language or script
(0 before); 12 now begin with 'Sure! Here is'``. When nothing explains the regression it says
so plainly, and it reads sensibly when nothing regressed at all.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from goldgate.model.diagnosis import CategoryCounts, Cluster

#: category → what an example that newly has it did (one example, several)
PHRASES: dict[str, tuple[str, str]] = {
    "empty": ("is now empty", "are now empty"),
    "truncated": ("is now truncated", "are now truncated"),
    "repetition": ("now repeats itself", "now repeat themselves"),
    "refusal": ("now refuses", "now refuse"),
    "language_switch": ("switched language or script", "switched language or script"),
    "format_break": ("broke the references' format", "broke the references' format"),
    "number_change": ("changed a number", "changed numbers"),
    "copied_input": ("now copies the input", "now copy the input"),
    "length_drift": ("drifted in length", "drifted in length"),
    "surface_only": (
        "differs from its blessed output only in case, spacing or punctuation",
        "differ from their blessed outputs only in case, spacing or punctuation",
    ),
}
#: categories named in the headline, at most
TOP = 3
#: clusters named in the headline, at most
TOP_CLUSTERS = 2


def phrase(name: str, count: int) -> str:
    """What ``count`` examples that newly fall into ``name`` did."""
    one, many = PHRASES.get(name, (f"now shows {name}", f"now show {name}"))
    return one if count == 1 else many


def cluster_text(cluster: Cluster) -> str:
    verb = "begin with" if cluster.kind == "opening" else "contain"
    return f"{cluster.count} now {verb} '{cluster.pattern}'"


def top_categories(
    categories: Mapping[str, CategoryCounts], field: str = "regressed"
) -> list[tuple[str, CategoryCounts]]:
    """The categories with a positive ``field`` count, most first (ties: detector order)."""
    listed = [(n, c) for n, c in categories.items() if (getattr(c, field) or 0) > 0]
    order = {name: i for i, name in enumerate(categories)}
    listed.sort(key=lambda item: (-(getattr(item[1], field) or 0), order[item[0]]))
    return listed


def headline(
    categories: Mapping[str, CategoryCounts],
    *,
    regressed: int,
    explained: int,
    clusters: Sequence[Cluster],
    baseline_side: str,
    n_examples: int,
    metric: str | None,
) -> str:
    """The sentence; ``explained`` of the ``regressed`` examples newly have some category."""
    if baseline_side != "diagnosed":
        why = (
            "no baseline to compare with"
            if baseline_side == "no baseline"
            else "the baseline kept no blessed outputs: only today's were diagnosed"
        )
        present = top_categories(categories, "current")[:TOP]
        if not present:
            return f"{why}; no failure mode found in the {n_examples:,} outputs"
        listed = ", ".join(f"{c.current:,} {name}" for name, c in present)
        return f"{why}; of the {n_examples:,} outputs today: {listed}"
    if regressed == 0:
        on = f" on {metric}" if metric else ""
        fresh = top_categories(categories, "new")[:TOP]
        if not fresh:
            return f"no example regressed{on}, and no failure mode is new since the baseline"
        listed = "; ".join(
            f"{c.new:,} {phrase(name, c.new or 0)} ({c.baseline:,} before)" for name, c in fresh
        )
        return f"no example regressed{on}, but {listed}"
    noun = "regressed example" if regressed == 1 else "regressed examples"
    ranked = top_categories(categories)[:TOP]
    parts: list[str] = []
    for position, (name, counts) in enumerate(ranked):
        count = counts.regressed or 0
        lead = f"{count:,} of {regressed:,} {noun}" if position == 0 else f"{count:,}"
        parts.append(f"{lead} {phrase(name, count)} ({counts.baseline or 0:,} before)")
    shown = [cluster_text(cluster) for cluster in clusters[:TOP_CLUSTERS]]
    if not parts:
        plain = (
            f"nothing detected explains the {regressed:,} {noun}: no failure mode is new"
            f" among {'it' if regressed == 1 else 'them'}"
        )
        if shown:
            return f"{plain}, but " + "; ".join(shown)
        return f"{plain}, and they share no new opening or phrase" if regressed > 1 else plain
    unexplained = regressed - explained
    if shown:
        parts.extend(shown)
    elif unexplained:
        parts.append(f"{unexplained:,} not explained by any detector")
    return "; ".join(parts)
