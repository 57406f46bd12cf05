"""The diagnosis formatted for display: the headline, the category table, the clusters and
what changed, as plain text every report renders (and escapes) its own way."""

from __future__ import annotations

from dataclasses import dataclass

from goldgate.model.diagnosis import Changes, SuiteDiagnosis
from goldgate.model.result import SuiteResult
from goldgate.report.formatting import DASH

#: categories listed on the terminal, at most
TERMINAL_CATEGORIES = 5
#: commits and files listed in a report's "what changed", at most
SHOWN_COMMITS = 10
SHOWN_FILES = 15


@dataclass(frozen=True)
class CategoryRow:
    """One category of one suite: counts on each side (None: not diagnosed)."""

    name: str
    baseline: int | None
    current: int
    new: int | None
    regressed: int | None

    def cells(self) -> tuple[str, str, str, str]:
        """The four counts as table cells (a dash where unknown)."""
        return (
            DASH if self.baseline is None else f"{self.baseline:,}",
            f"{self.current:,}",
            DASH if self.new is None else f"{self.new:,}",
            DASH if self.regressed is None else f"{self.regressed:,}",
        )

    @property
    def shown(self) -> bool:
        """Worth a line: some output has it on either side."""
        return bool(self.current or self.baseline or self.new)


@dataclass(frozen=True)
class DiagnosisView:
    """One suite's diagnosis, formatted."""

    headline: str
    regressed: int
    metric: str | None
    baseline_side: str
    rows: tuple[CategoryRow, ...]
    clusters: tuple[str, ...]
    changes: tuple[str, ...]
    detectors: str


def category_rows(diagnosis: SuiteDiagnosis) -> tuple[CategoryRow, ...]:
    """Every category, most regressed first, then most new, then most current (ties:
    detector order)."""
    rows = [
        CategoryRow(name, c.baseline, c.current, c.new, c.regressed)
        for name, c in diagnosis.categories.items()
    ]
    order = {row.name: i for i, row in enumerate(rows)}
    rows.sort(key=lambda r: (-(r.regressed or 0), -(r.new or 0), -r.current, order[r.name]))
    return tuple(rows)


def cluster_lines(diagnosis: SuiteDiagnosis) -> tuple[str, ...]:
    """``12 now begin with 'Sure! Here is' (qa-003, qa-007, …)``: one line a cluster."""
    lines = []
    for cluster in diagnosis.clusters:
        verb = "begin with" if cluster.kind == "opening" else "contain"
        ids = ", ".join(cluster.ids[:5]) + (", …" if cluster.count > 5 else "")
        lines.append(f"{cluster.count:,} now {verb} '{cluster.pattern}' ({ids})")
    return tuple(lines)


def change_lines(changes: Changes, *, versions: bool = True) -> tuple[str, ...]:
    """What changed since the baseline, a line per kind (empty when nothing is known)."""
    lines = []
    if changes.baseline_commit is not None:
        total = len(changes.commits) + changes.more_commits
        if total:
            shown = changes.commits[:SHOWN_COMMITS]
            listed = "; ".join(f"{c.commit[:10]} {c.subject}" for c in shown)
            more = f"; and {total - len(shown):,} more" if total > len(shown) else ""
            noun = "commit" if total == 1 else "commits"
            lines.append(
                f"{total:,} {noun} since the baseline's ({changes.baseline_commit[:10]}):"
                f" {listed}{more}"
            )
        else:
            lines.append(f"no commit since the baseline's ({changes.baseline_commit[:10]})")
        files = len(changes.files) + changes.more_files
        if files:
            shown_files = changes.files[:SHOWN_FILES]
            more = f", and {files - len(shown_files):,} more" if files > len(shown_files) else ""
            lines.append(f"files changed: {', '.join(shown_files)}{more}")
    if changes.config:
        lines.append(f"configuration keys changed: {', '.join(changes.config)}")
    for signature in changes.signatures:
        lines.append(f"signature changed: {signature}")
    baseline_goldgate = changes.versions.get("goldgate (baseline)")
    if baseline_goldgate:
        lines.append(
            f"goldgate {changes.versions.get('goldgate', '?')} (the baseline was written by"
            f" {baseline_goldgate})"
        )
    if versions and changes.versions:
        lines.append(
            "versions: " + ", ".join(f"{name} {v}" for name, v in changes.versions.items())
        )
    return tuple(lines)


def diagnosis_view(suite: SuiteResult, *, versions: bool = True) -> DiagnosisView | None:
    """The suite's diagnosis formatted, None when the run made none."""
    diagnosis = suite.diagnosis
    if diagnosis is None:
        return None
    return DiagnosisView(
        headline=diagnosis.headline,
        regressed=diagnosis.regressed,
        metric=diagnosis.metric,
        baseline_side=diagnosis.baseline_side,
        rows=category_rows(diagnosis),
        clusters=cluster_lines(diagnosis),
        changes=change_lines(diagnosis.changes, versions=versions),
        detectors=", ".join(f"{name} v{v}" for name, v in diagnosis.detectors.items()),
    )


def category_line(row: CategoryRow) -> str:
    """``empty: 0 blessed → 22 now, 22 new, 22 of the regressed``."""
    if row.baseline is None:
        return f"{row.name}: {row.current:,} now"
    text = f"{row.name}: {row.baseline:,} blessed → {row.current:,} now, {row.new or 0:,} new"
    if row.regressed:
        text += f", {row.regressed:,} of the regressed"
    return text


def terminal_lines(suite: SuiteResult, indent: str = "  ") -> list[str]:
    """The headline and a line per top category, for a terminal summary; nothing for a
    suite where no example regressed and no failure mode is new (nothing to explain: the
    reports keep the full table)."""
    view = diagnosis_view(suite, versions=False)
    if view is None:
        return []
    found = suite.diagnosis
    # a category is news when it is new since the baseline, or found at all without one
    news = any(row.new or (row.new is None and row.current) for row in view.rows)
    if found is not None and not found.regressed and not news:
        return []
    lines = [f"{indent}why: {view.headline}"]
    shown = [row for row in view.rows if row.shown][:TERMINAL_CATEGORIES]
    lines += [f"{indent}  {category_line(row)}" for row in shown]
    lines += [f"{indent}  cluster: {line}" for line in view.clusters[:3]]
    return lines


def run_headline(suites: list[SuiteResult]) -> str | None:
    """``why: …``: the first regressed suite's headline (``why (qa): …`` when the run has
    several suites); None when no suite regressed."""
    for suite in suites:
        if suite.verdict.value == "regressed" and suite.diagnosis is not None:
            where = f" ({suite.name})" if len(suites) > 1 else ""
            return f"why{where}: {suite.diagnosis.headline}"
    return None
