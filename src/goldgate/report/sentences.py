"""The sentences reports print: what a gate check saw, and how a suite's outputs came about.

A check's sentence is exactly true of its numbers and status; a suite's notes tell the
golden-set change and the outputs reused instead of obtained; a judge's tally tells what
judging cost. The same words appear in every report.
"""

from __future__ import annotations

import math

from goldgate import wording
from goldgate.model.gate_records import BudgetUse
from goldgate.model.result import CheckResult, CheckStatus, MetricSummary, SuiteResult
from goldgate.report.formatting import DASH, MINUS, fmt_points


def _moved(check: CheckResult) -> str:
    """``fell 6.00 points (82.00 → 76.00)``: the change as it happened, whatever the rule.

    A change too small for two decimals is shown with more (``rose 0.004 points``), never as
    "rose 0.00 points"; no change at all is ``unchanged``.
    """
    delta = check.delta or 0.0
    places = wording.change_decimals(delta)
    if places is None:
        return f"unchanged ({fmt_points(check.baseline)} \u2192 {fmt_points(check.current)})"
    verb = "fell" if delta < 0 else "rose"

    def shown(value: float | None) -> str:
        if value is None or not math.isfinite(value):
            return DASH
        return f"{round(value, places) + 0.0:.{places}f}".replace("-", MINUS)

    amount = shown(abs(delta))
    unit = "point" if amount == f"{1:.{places}f}" else "points"
    return f"{verb} {amount} {unit} ({shown(check.baseline)} \u2192 {shown(check.current)})"


def _tolerance(check: CheckResult) -> str:
    if check.rule == "max_drop_rel" and check.baseline is not None:
        tolerance = abs(check.baseline) * check.threshold
        return f"the {fmt_points(tolerance)} tolerance (max_drop_rel {check.threshold:g})"
    return f"the {fmt_points(check.threshold)} tolerance"


def _evidence(check: CheckResult, alpha: float | None) -> str:
    if check.p_value is None:
        return ""
    level = f" < \u03b1 {alpha:g}" if alpha is not None else ""
    return f"{wording.p_is(check.p_value)}{level}"


def check_sentence(check: CheckResult, alpha: float | None = None) -> str:
    """What the check saw, in words that are exactly true of its numbers and status.

    ``rose 13.33 points (31.12 → 44.45), more than the 2.00 tolerance; bless to accept``,
    never "improved beyond max_drop". Rules this module does not know keep the gate's message.
    """
    if check.confirmation is not None:  # what the first run saw, then what the re-runs did
        message = check.message.removesuffix(f"; {check.confirmation}")
        first = check.model_copy(
            update={"status": CheckStatus.FAIL, "confirmation": None, "message": message}
        )
        return f"{check_sentence(first, alpha)}; {check.confirmation}"
    status = check.status
    if check.rule == "must_pass":  # its message names the examples; the id names the rule
        return check.message.split(": must_pass ", 1)[-1]
    if status is CheckStatus.SKIPPED:
        return "no baseline to compare with; run `goldgate bless` to create one"
    if check.rule in ("min", "max") and check.current is not None:
        bound = "minimum" if check.rule == "min" else "maximum"
        ok = status is CheckStatus.PASS
        where = (
            ("at least" if check.rule == "min" else "at most")
            if ok
            else ("below" if check.rule == "min" else "above")
        )
        the = "" if ok else " the"
        return f"{fmt_points(check.current)} is {where}{the} {bound} {fmt_points(check.threshold)}"
    if check.rule == "max_flips" and check.flips is not None:
        n = check.flips
        allowed = int(check.threshold)
        went = f"{wording.plural(n, 'example')} went from right to wrong"
        if status is CheckStatus.FAIL:
            return f"{went}, more than the {allowed:,} allowed"
        return f"{went}; {allowed:,} allowed"
    if check.rule == "max_new" and check.current is not None:
        n = int(check.current)
        allowed = int(check.threshold)
        went = f"{wording.plural(n, 'example')} newly {check.metric} since the baseline"
        if status is CheckStatus.FAIL:
            return f"{went}, more than the {allowed:,} allowed"
        return f"{went}; {allowed:,} allowed"
    if check.rule in ("max_drop", "max_drop_rel") and check.delta is not None:
        moved = _moved(check)
        tolerance = _tolerance(check)
        p = _evidence(check, alpha)
        if status is CheckStatus.FAIL:
            return f"{moved}, more than {tolerance}" + (f"; significant ({p})" if p else "")
        if status is CheckStatus.FORGIVEN:
            why = (
                wording.p_is(check.p_value) + (f" \u2265 \u03b1 {alpha:g}" if alpha else "")
                if check.p_value is not None
                else "the interval includes zero"
            )
            return (
                f"{moved}, more than {tolerance}, but not significantly ({why}): forgiven as noise"
            )
        if status is CheckStatus.IMPROVED:
            return f"{moved}, more than {tolerance}; bless to accept"
        return f"{moved}, within {tolerance}"
    return check.message


#: removed or edited examples listed by name in a note (the JSON result has them all)
MAX_NOTE_IDS = 10


def suite_notes(suite: SuiteResult) -> list[str]:
    """Plain-text lines on the golden-set change and reused outputs (same words everywhere)."""
    from goldgate.gate.golden_change import describe

    notes: list[str] = []
    change = suite.golden_change
    if change is not None:
        # with none shared, describe says that only min and max judged, on the whole set
        decided = "; the verdict is decided on them" if change.n_shared else ""
        notes.append(describe(change) + decided)
        if change.added:
            shown = ", ".join(change.added[:MAX_NOTE_IDS])
            extra = len(change.added) - MAX_NOTE_IDS
            more = f" and {extra:,} more" if extra > 0 else ""
            notes.append(f"added (no baseline): {shown}{more}")
        for label, items in (("removed", change.removed), ("edited", change.edited)):
            if not items:
                continue
            listed = [
                item.id
                + (
                    " ("
                    + ", ".join(f"{m} {fmt_points(v)}" for m, v in item.baseline_scores.items())
                    + ")"
                    if item.baseline_scores
                    else ""
                )
                for item in items[:MAX_NOTE_IDS]
            ]
            more = f" and {len(items) - MAX_NOTE_IDS:,} more" if len(items) > MAX_NOTE_IDS else ""
            why = " (a removal can hide a regression)" if label == "removed" else ""
            notes.append(f"{label}{why}, blessed scores: {'; '.join(listed)}{more}")
    cache = suite.cache
    if cache is not None and cache.reused:
        where = {
            "cache": "the output cache",
            "result": "the run just reviewed (result.json)",
            "baseline": "the baseline",
        }.get(cache.source, cache.source)
        since = f" of {cache.since}" if cache.since else ""
        notes.append(
            f"{cache.reused:,} of {wording.plural(cache.total, 'output')} reused from"
            f" {where}{since}, not obtained from the system in this run (--no-cache to call it"
            " for every example)"
        )
    if cache is not None and cache.dropped:
        notes.append(
            f"{cache.dropped:,} cached outputs of an earlier run not reused:"
            f" {cache.dropped_reason or 'the system changed'}"
        )
    return notes + confirmation_notes(suite)


#: characters of a re-run output shown in a note (result.json has them whole)
RERUN_OUTPUT_CHARS = 120


def confirmation_notes(suite: SuiteResult) -> list[str]:
    """What confirming the suite's failing checks by re-running the system found and cost."""
    confirmation = suite.confirmation
    if confirmation is None:
        return []
    if confirmation.note is not None:
        return [f"confirm: {confirmation.note}"]
    n = len(confirmation.examples)
    reruns = wording.plural(confirmation.reruns, "re-run")
    notes = [
        f"confirm: re-ran {wording.plural(n, 'example')} {confirmation.reruns}"
        f" time{'s' if confirmation.reruns != 1 else ''}"
        f" ({wording.plural(confirmation.calls, 'call')}, {confirmation.seconds:.1f} s)"
    ]
    for item in confirmation.checks:
        if item.confirmed:
            notes.append(f"{item.check}: confirmed on {reruns}")
        else:
            passed = confirmation.reruns - item.failed_reruns
            notes.append(
                f"{item.check}: not confirmed: forgiven as noise (it passed on {passed} of"
                f" {reruns})"
            )
    for example in confirmation.examples:
        shown = "; ".join(
            f"#{k}: " + _quoted(" | ".join(outputs))
            for k, outputs in enumerate(example.outputs, start=1)
        )
        notes.append(f"re-run outputs of {example.id}: {shown}")
    return notes


def _quoted(text: str) -> str:
    clipped = text if len(text) <= RERUN_OUTPUT_CHARS else text[:RERUN_OUTPUT_CHARS] + "…"
    return repr(clipped)


def budget_sentence(budget: BudgetUse | None) -> str:
    """``budget: $0.0123 spent of $5.00 (0.2 %), 14 paid calls`` ("" without a budget)."""
    if budget is None:
        return ""
    share = 100.0 * budget.spent_usd / budget.max_usd if budget.max_usd else 0.0
    text = (
        f"budget: ${budget.spent_usd:,.4f} spent of ${budget.max_usd:,.2f} ({share:.1f} %),"
        f" {wording.plural(budget.calls, 'paid call')}"
    )
    if budget.stopped:
        left = budget.max_usd - budget.spent_usd
        text += f"; stopped before a call that would exceed it, ${left:,.4f} left"
    return text


def judge_tally(summary: MetricSummary) -> str | None:
    """'llm_judge: 12 judgments, 1,440 prompt + 360 completion tokens, $0.0014; this run: 6
    requests (1 retry), 6 judgments from the cache' from a judge's components and calls.

    The first part is what judging the set costs (cached judgments included), the second
    what this run itself sent.
    """
    c = summary.components
    if not {"judgments", "prompt_tokens", "completion_tokens", "cost_usd"} <= set(c):
        return None
    text = (
        f"{summary.metric}: {wording.plural(c['judgments'], 'judgment')},"
        f" {c['prompt_tokens']:,} prompt +"
        f" {c['completion_tokens']:,} completion tokens"
    )
    if c["cost_usd"]:
        text += f", ${c['cost_usd']:,.4f}"
    if c.get("judge_spread"):
        text += f", judge spread {c['judge_spread']:.2f} points"
    calls = summary.calls
    if calls is not None:
        text += (
            f"; this run: {wording.plural(calls.requests, 'request')}"
            f" ({wording.plural(calls.retries, 'retry', 'retries')}),"
            f" {wording.plural(calls.cached, 'judgment')} from the cache"
        )
    return text
