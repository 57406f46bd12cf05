"""Must-pass examples: contracts on single examples, beside the statistics of the gate.

A rule selects examples by tag or id and sets a threshold on one metric, in the metric's
direction (``min`` where higher is better, ``max`` for an error rate such as TER). Every
selected example must meet it on its own — with several samples, its mean over them — however
the aggregate moved. A failure is a failure: no bootstrap, no tolerance, never forgiven as
noise (and never re-run away by ``confirm``). Pure: it reads no files and prints nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from goldgate.errors import first_of
from goldgate.gate.stats import FloatArray
from goldgate.model.gate_records import MustPassExample, MustPassOutcome
from goldgate.model.result import CheckResult, CheckStatus

if TYPE_CHECKING:
    from goldgate.model.config import MustPassRule

#: the rule name of a must-pass check in the result
RULE = "must_pass"
#: thresholds are compared with this slack, as the gate's own (a score of exactly min passes)
EPSILON = 1e-9


def selection_label(rule: MustPassRule) -> str:
    """``tag=critical``, ``ids=qa-1,qa-2``, or both joined by ``+``: part of the check's id."""
    parts = []
    if rule.tags:
        parts.append(f"tag{'s' if len(rule.tags) > 1 else ''}={','.join(rule.tags)}")
    if rule.ids:
        parts.append(f"id{'s' if len(rule.ids) > 1 else ''}={','.join(rule.ids)}")
    return "+".join(parts)


def selected_positions(
    rule: MustPassRule, ids: Sequence[str], tags: Sequence[Sequence[str]]
) -> list[int]:
    """Positions (golden order) of the examples ``rule`` selects."""
    wanted_ids = set(rule.ids)
    wanted_tags = set(rule.tags)
    return [
        at
        for at, (example_id, example_tags) in enumerate(zip(ids, tags, strict=True))
        if example_id in wanted_ids or not wanted_tags.isdisjoint(example_tags)
    ]


def missing_ids(rule: MustPassRule, ids: Sequence[str]) -> list[str]:
    """The ids ``rule`` names that the golden set does not hold."""
    present = set(ids)
    return [example_id for example_id in rule.ids if example_id not in present]


def must_pass_checks(
    suite: str,
    rules: Sequence[MustPassRule],
    *,
    ids: Sequence[str],
    tags: Sequence[Sequence[str]],
    scores: Mapping[str, FloatArray],
    higher_is_better: Mapping[str, bool],
    outputs: Mapping[str, Sequence[str]],
    references: Callable[[int], Sequence[str]],
) -> list[CheckResult]:
    """One check per rule: passed when every example it selects meets its threshold.

    ``scores`` holds each metric's per-example score (the mean over samples), aligned with
    ``ids``; ``references(position)`` gives an example's references. A failing example
    carries its outputs and references, so every report can show what broke.
    """
    checks = []
    for rule in rules:
        higher = higher_is_better.get(rule.metric, True)
        threshold = rule.min if rule.min is not None else rule.max
        assert threshold is not None  # the configuration requires one
        positions = selected_positions(rule, ids, tags)
        label = selection_label(rule)
        name = f"{suite}: must_pass {rule.describe()}"
        values = scores[rule.metric]
        examples = []
        for at in positions:
            score = float(values[at])
            passed = (
                score >= threshold - EPSILON
                if rule.min is not None
                else score <= threshold + EPSILON
            )
            example = MustPassExample(id=ids[at], score=score, passed=passed)
            if not passed:
                example.outputs = list(outputs.get(ids[at], ()))
                example.references = list(references(at))
            examples.append(example)
        failing = [example for example in examples if not example.passed]
        worst = None
        if examples:
            pick = min if higher else max
            worst = pick(example.score for example in examples)
        if not examples:
            status = CheckStatus.SKIPPED
            message = f"{name}: the rule selects no example of the golden set"
        elif failing:
            status = CheckStatus.FAIL
            named = [f"{example.id} ({example.score:.2f})" for example in failing]
            message = (
                f"{name}: {len(failing)} of {len(examples)} example"
                f"{'s' if len(examples) != 1 else ''} failed: {first_of(named, 10)}"
            )
        else:
            status = CheckStatus.PASS
            message = f"{name}: all {len(examples)} example{'s' if len(examples) != 1 else ''} pass"
        checks.append(
            CheckResult(
                suite=suite,
                metric=rule.metric,
                rule=RULE,
                threshold=threshold,
                status=status,
                message=message,
                higher_is_better=higher,
                current=worst,
                must_pass=MustPassOutcome(selection=label, examples=examples),
            )
        )
    return checks
