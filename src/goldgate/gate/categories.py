"""The ``max_new`` gate rule: at most N examples may newly fall into a category (a failure
mode found by the diagnosis) since the baseline, per suite and, with ``max_new_slices``, per
tag slice. A system that starts refusing fails even when its scores barely move."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from goldgate.errors import first_of
from goldgate.model.result import CheckResult, CheckStatus


def _check(
    suite: str,
    tag: str | None,
    category: str,
    allowed: int,
    ids: Sequence[str],
    baseline_found: bool,
) -> CheckResult:
    label = f"{suite} [tag={tag}]" if tag else suite
    common: dict[str, Any] = {"suite": suite, "metric": category, "rule": "max_new", "slice": tag}
    if not baseline_found:
        return CheckResult(
            threshold=float(allowed),
            status=CheckStatus.SKIPPED,
            message=f"{label}: {category}: no blessed outputs to compare with; run"
            " `goldgate bless` to create a baseline",
            **common,
        )
    n = len(ids)
    ok = n <= allowed
    detail = f" ({first_of(list(ids), 5)})" if n else ""
    noun = "example" if n == 1 else "examples"
    return CheckResult(
        threshold=float(allowed),
        status=CheckStatus.PASS if ok else CheckStatus.FAIL,
        message=f"{label}: {n} {noun} newly {category} since the baseline{detail}; "
        + ("at most" if ok else "more than the allowed")
        + f" {allowed}",
        current=float(n),
        **common,
    )


def max_new_checks(
    suite: str,
    rule: Mapping[str, int],
    names: Sequence[str],
    fresh: npt.NDArray[np.uint64],
    ids: Sequence[str],
    tags: Sequence[Sequence[str]],
    *,
    slices: bool,
    baseline_found: bool,
) -> list[CheckResult]:
    """One check per category of ``rule`` (and per tag slice with ``slices``); ``fresh`` is
    each example's newly present modes as a bit mask over ``names``."""
    bit = {name: index for index, name in enumerate(names)}
    groups: list[tuple[str | None, npt.NDArray[np.intp] | None]] = [(None, None)]
    tag: str | None
    if slices:
        members: dict[str, list[int]] = {}
        for index, example_tags in enumerate(tags):
            for tag in example_tags:
                members.setdefault(tag, []).append(index)
        groups += [(name, np.asarray(members[name], dtype=np.intp)) for name in sorted(members)]
    checks: list[CheckResult] = []
    for tag, at in groups:
        for category, allowed in rule.items():
            has = (fresh >> np.uint64(bit[category]) & np.uint64(1)).astype(bool)
            positions = np.flatnonzero(has) if at is None else at[has[at]]
            found = [ids[i] for i in positions.tolist()]
            checks.append(_check(suite, tag, category, allowed, found, baseline_found))
    return checks
