"""Hand-made RunResults for the report tests: pass, regressed, improved, error, hostile, large.

The numbers are invented but coherent (a delta is current minus baseline, an interval holds its
delta, a failing check has a drop beyond its threshold) so the reports read as they would.
"""

from __future__ import annotations

import random
import re
from typing import Any, Literal

from goldgate.model.example_table import ExampleResult
from goldgate.model.result import (
    CheckResult,
    CheckStatus,
    Interval,
    MetricSummary,
    RunResult,
    SignificanceSettings,
    SliceResult,
    SuiteResult,
    Verdict,
)

Kind = Literal["pass", "regressed", "improved", "error"]
KINDS: tuple[Kind, ...] = ("pass", "regressed", "improved", "error")
CREATED_AT = "2026-11-30T12:00:00+00:00"

_PROSE = (
    "the court ruled that contract was void because consent was missing and the "
    "patient recovered after treatment with a new drug while the river flooded the old town "
    "during spring rains council approved budget for schools roads and parks"
)
WORDS = _PROSE.split(" ")

HOSTILE = [
    "<script>window.__pwned = 1; alert('x')</script>",
    '<img src="https://evil.example/pixel.png" onerror="window.__pwned = 2">',
    "</textarea><svg onload=alert(3)>",
    "</script><script>alert(4)</script>",
    '<a href="javascript:alert(5)">click me</a>',
    "[click](javascript:alert(6))",
    "@octocat @github/security please review",
    "![tracker](https://evil.example/t.png)",
    '<iframe src="https://evil.example/"></iframe>',
    "<style>body{background:url(https://evil.example/bg.png)}</style>",
    "{{ 7*7 }} {% raw %} ${7*7} | pipe | `tick` ``` fence",
    "</pre></details><details open><summary>x</summary>",
    "<!-- goldgate-report --> &amp; &lt;b&gt; \u2028\u2029 \x00\x01 end",
]


def _sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _mutate(rng: random.Random, text: str, k: int) -> str:
    words = text.split()
    for _ in range(k):
        if not words:
            break
        i = rng.randrange(len(words))
        op = rng.random()
        if op < 0.4:
            words[i] = rng.choice(WORDS)
        elif op < 0.7:
            del words[i]
        else:
            words.insert(i, rng.choice(WORDS))
    return " ".join(words)


def _summary(
    metric: str,
    baseline: float | None,
    current: float,
    *,
    half_width: float = 1.5,
    p_value: float | None = None,
) -> MetricSummary:
    if baseline is None:
        return MetricSummary(metric=metric, signature=_signature(metric), current=current)
    delta = current - baseline
    return MetricSummary(
        metric=metric,
        signature=_signature(metric),
        current=current,
        baseline=baseline,
        delta=delta,
        interval=Interval(low=delta - half_width, high=delta + half_width, level=0.95),
        p_value=p_value if p_value is not None else (0.004 if abs(delta) > half_width else 0.41),
    )


def _signature(metric: str) -> str:
    extra = {
        "exact_match": "norm:squad",
        "token_f1": "norm:squad",
        "bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp",
        "chrf": "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no",
        "rougeLsum": "tok:default|stem:yes",
        "rouge2": "tok:default|stem:yes",
        "length_ratio": "tok:default",
    }[metric]
    return f"{extra}|version:0.1.0"


def _check(
    suite: str,
    summary: MetricSummary,
    rule: str,
    threshold: float,
    status: CheckStatus,
    *,
    tag: str | None = None,
) -> CheckResult:
    where = f"{suite}[{tag}]" if tag else suite
    delta = summary.delta
    messages = {
        CheckStatus.PASS: f"{where} {summary.metric}: {rule} {threshold:g} holds",
        CheckStatus.FAIL: (
            f"{where} {summary.metric} fell by {-(delta or 0):.2f} points, more than "
            f"{rule} {threshold:g}, and the drop is significant"
        ),
        CheckStatus.FORGIVEN: (
            f"{where} {summary.metric} fell by {-(delta or 0):.2f} points, more than "
            f"{rule} {threshold:g}, but the interval includes zero: forgiven as noise"
        ),
        CheckStatus.IMPROVED: f"{where} {summary.metric} rose by {delta or 0:.2f} points",
        CheckStatus.SKIPPED: f"{where} {summary.metric}: no baseline yet",
    }
    return CheckResult(
        suite=suite,
        metric=summary.metric,
        rule=rule,
        threshold=threshold,
        status=status,
        message=messages[status],
        slice=tag,
        current=summary.current,
        baseline=summary.baseline,
        delta=summary.delta,
        interval=summary.interval,
        p_value=summary.p_value,
    )


# Per kind and suite: metric -> (baseline, current, half width of the interval)
_SCORES: dict[str, dict[str, dict[str, tuple[float, float, float]]]] = {
    "pass": {
        "qa": {"exact_match": (82.0, 82.5, 2.0), "token_f1": (88.31, 88.12, 1.1)},
        "summarize": {
            "rougeLsum": (41.27, 41.53, 0.9),
            "rouge2": (19.84, 19.70, 0.8),
            "length_ratio": (97.0, 96.4, 2.5),
        },
        "translate": {"bleu": (31.12, 31.40, 1.2), "chrf": (55.02, 55.10, 0.7)},
    },
    "regressed": {
        "qa": {"exact_match": (82.0, 76.0, 2.5), "token_f1": (88.31, 84.02, 1.6)},
        "summarize": {
            "rougeLsum": (41.27, 40.95, 0.9),
            "rouge2": (19.84, 17.51, 2.6),
            "length_ratio": (97.0, 112.3, 3.0),
        },
        "translate": {"bleu": (31.12, 31.05, 1.2), "chrf": (55.02, 54.96, 0.7)},
    },
    "improved": {
        "qa": {"exact_match": (76.0, 84.0, 2.5), "token_f1": (84.02, 89.75, 1.5)},
        "summarize": {
            "rougeLsum": (41.27, 41.33, 0.9),
            "rouge2": (19.84, 19.91, 0.8),
            "length_ratio": (97.0, 97.2, 2.5),
        },
        "translate": {"bleu": (29.40, 31.12, 1.1), "chrf": (54.10, 55.02, 0.6)},
    },
}
_GATES: dict[str, list[tuple[str, str, float]]] = {
    "qa": [("exact_match", "min", 70.0), ("exact_match", "max_drop", 2.0)],
    "summarize": [
        ("rougeLsum", "min", 35.0),
        ("rougeLsum", "max_drop", 1.0),
        ("rouge2", "max_drop", 2.0),
    ],
    "translate": [("bleu", "max_drop", 1.0)],
}
_TAGS = ("legal", "medical", "short")


def _status(rule: str, threshold: float, m: MetricSummary) -> CheckStatus:
    # A stand-in for the gate, good enough to make coherent fixtures; reports never do this.
    if rule == "min":
        return CheckStatus.PASS if m.current >= threshold else CheckStatus.FAIL
    if m.delta is None or m.interval is None:
        return CheckStatus.SKIPPED
    significant = m.interval.high < 0 or m.interval.low > 0
    if -m.delta > threshold:
        return CheckStatus.FAIL if significant else CheckStatus.FORGIVEN
    if m.delta > 0 and significant:
        return CheckStatus.IMPROVED
    return CheckStatus.PASS


def _examples(
    rng: random.Random, suite: str, metrics: list[str], n: int, drift: float, texts: list[str]
) -> list[ExampleResult]:
    out = []
    for i in range(n):
        ref = _sentence(rng, rng.randint(4, 14))
        baseline_output = _mutate(rng, ref, rng.randint(0, 2))
        changed = rng.random() < 0.5
        output = _mutate(rng, baseline_output, rng.randint(1, 4)) if changed else baseline_output
        if texts:
            output = f"{output} {texts[i % len(texts)]}"
            ref = f"{ref} {texts[(i + 3) % len(texts)]}"
        scores: dict[str, float] = {}
        base_scores: dict[str, float] = {}
        flipped_wrong: list[str] = []
        flipped_right: list[str] = []
        for metric in metrics:
            if metric == "exact_match":
                before = 100.0 if rng.random() < 0.8 else 0.0
                after = before
                if changed and rng.random() < 0.5:
                    after = 0.0 if (drift <= 0 and before == 100.0) else 100.0
                if before == 100.0 and after == 0.0:
                    flipped_wrong.append(metric)
                if before == 0.0 and after == 100.0:
                    flipped_right.append(metric)
            else:
                before = round(rng.uniform(20, 95), 4)
                move = rng.uniform(-25, 8) if drift < 0 else rng.uniform(-6, 12)
                after = round(min(100.0, max(0.0, before + move)), 4) if changed else before
            scores[metric] = after
            base_scores[metric] = before
        out.append(
            ExampleResult(
                id=f"{suite}-{i:03d}",
                line=i + 1,
                tags=[t for j, t in enumerate(_TAGS) if (i + j) % (j + 2) == 0],
                input={"question": f"question {i}?"} if suite == "qa" else f"document {i}",
                references=[ref] if i % 4 else [ref, _sentence(rng, 5)],
                output=output,
                baseline_output=baseline_output if i != n - 1 else None,
                scores=scores,
                baseline_scores=base_scores if i != n - 1 else {},
                flipped_to_wrong=flipped_wrong,
                flipped_to_right=flipped_right,
                new=i == n - 1,
            )
        )
    return out


def _suite(
    kind: Kind, name: str, n: int, rng: random.Random, texts: list[str], baseline: bool = True
) -> SuiteResult:
    scores = _SCORES["regressed" if kind == "error" else kind][name]
    metrics = [
        _summary(m, b if baseline else None, c, half_width=w) for m, (b, c, w) in scores.items()
    ]
    checks = []
    for metric, rule, threshold in _GATES[name]:
        m = next(s for s in metrics if s.metric == metric)
        checks.append(_check(name, m, rule, threshold, _status(rule, threshold, m)))
    slices = []
    for j, tag in enumerate(_TAGS):
        slice_metrics = []
        for m in metrics:
            shift = (-3.2 if kind == "regressed" else 2.4 if kind == "improved" else 0.1) * (
                j - 0.5
            )
            base = None if m.baseline is None else m.baseline + j
            slice_metrics.append(
                _summary(m.metric, base, m.current + j + shift, half_width=1.0 + j)
            )
        slices.append(SliceResult(tag=tag, n_examples=max(1, n // (j + 2)), metrics=slice_metrics))
    if kind == "regressed" and name == "qa":
        tagged = slices[0].metrics[0]
        checks.append(_check(name, tagged, "max_drop", 2.0, CheckStatus.FAIL, tag=slices[0].tag))
    drift = -1.0 if kind == "regressed" else 1.0 if kind == "improved" else 0.0
    examples = _examples(rng, name, list(scores), n, drift, texts)
    if not baseline:
        blank = {"baseline_output": None, "baseline_scores": {}, "new": True}
        blank |= {"flipped_to_wrong": [], "flipped_to_right": []}
        examples = [ex.model_copy(update=blank) for ex in examples]
    verdicts = {CheckStatus.FAIL: Verdict.REGRESSED, CheckStatus.IMPROVED: Verdict.IMPROVED}
    verdict = Verdict.PASS
    for check in checks:
        if check.status in verdicts and verdict is not Verdict.REGRESSED:
            verdict = verdicts[check.status]
    return SuiteResult(
        name=name,
        verdict=verdict,
        goldens=f"goldens/{name}.jsonl",
        golden_hash="sha256:" + f"{rng.getrandbits(256):064x}",
        n_examples=n,
        metrics=metrics,
        checks=checks,
        slices=slices,
        examples=examples,
    )


def make_result(
    kind: Kind,
    *,
    n_examples: int = 12,
    seed: int = 0,
    texts: list[str] | None = None,
    created_at: str = CREATED_AT,
    baseline: bool = True,
) -> RunResult:
    """A coherent RunResult of the given kind, with ``n_examples`` examples per suite."""
    rng = random.Random(f"{kind}-{seed}")
    texts = texts or []
    names = ["qa", "summarize", "translate"]
    suites = [_suite(kind, name, n_examples, rng, texts, baseline) for name in names]
    hints: list[str] = []
    errors: list[str] = []
    if kind == "error":
        suites[1] = SuiteResult(
            name="summarize",
            verdict=Verdict.ERROR,
            goldens="goldens/summarize.jsonl",
            golden_hash="sha256:" + "0" * 64,
            n_examples=n_examples,
            metrics=[],
            checks=[],
            error=(
                "system command 'python -m app.summarize' exited with code 1 after 7 of "
                f"{n_examples} outputs; stderr: Traceback ... RuntimeError: CUDA out of memory"
            ),
        )
        errors.append(f"summarize: {suites[1].error}")
        verdict = Verdict.ERROR
    else:
        verdict = Verdict.PASS
        if any(s.verdict is Verdict.REGRESSED for s in suites):
            verdict = Verdict.REGRESSED
        elif any(s.verdict is Verdict.IMPROVED for s in suites):
            verdict = Verdict.IMPROVED
            hints.append("Scores improved: run `goldgate bless` to make this run the baseline.")
    return RunResult(
        goldgate_version="0.1.0",
        created_at=created_at,
        verdict=verdict,
        config="goldgate.yaml",
        baseline="goldgate.baseline.json",
        baseline_found=baseline,
        significance=SignificanceSettings(
            method="paired_bootstrap", resamples=1000, alpha=0.05, seed=0
        ),
        suites=suites,
        hints=hints,
        errors=errors,
    )


#: control characters a model may emit: a bidi override that reverses what follows, isolates,
#: an ANSI colour, C1 controls, DEL, a BOM, separators
CONTROLS = [
    "invoice_\u202etxt.exe is safe",
    "\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
    "a\u2066b\u2069c \u200e\u200f \u061c \u202a\u202b\u202c\u202d end",
    "\x85\x9b2J del\x7f \ufeffbom \u2028\u2029 \x00\x08\x0b\x0c",
]


#: what the terminal shows escaped (goldgate.terminal.console), written out again here so that a
#: change there cannot quietly narrow what the reports are held to
RAW_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]"
)


def hostile_result(hostile: list[str] | None = None) -> RunResult:
    """A regressed result whose texts, ids, tags and messages try to inject markup (``hostile``,
    by default :data:`HOSTILE`)."""
    texts = hostile or HOSTILE

    def evil(k: int) -> str:
        return texts[k % len(texts)]

    result = make_result("regressed", n_examples=len(texts), texts=texts)
    qa = result.suites[0]
    examples = list(qa.examples)
    for i, ex in enumerate(examples[: len(texts)]):
        examples[i] = ex.model_copy(
            update={
                "id": f"{ex.id} {evil(i)}",
                "tags": [*ex.tags, evil(i)],
                "references": [evil(i), *ex.references],
                "baseline_output": f"{evil(i)} {ex.baseline_output or ''}",
                "output": f"{ex.output} {evil(i)} {evil(i + 1)}",
                "flipped_to_wrong": ["exact_match"],
                "scores": {**ex.scores, "exact_match": 0.0},
                "baseline_scores": {**ex.baseline_scores, "exact_match": 100.0},
            }
        )
    checks = [
        c.model_copy(update={"message": f"{c.message} {evil(0)} {evil(6)}"}) for c in qa.checks
    ]
    slices = [s.model_copy(update={"tag": f"{s.tag} {evil(k)}"}) for k, s in enumerate(qa.slices)]
    suites = [qa.model_copy(update={"examples": examples, "checks": checks, "slices": slices})]
    return result.model_copy(
        update={
            "suites": suites + result.suites[1:],
            "hints": [f"hint {evil(1)}"],
            "errors": [f"warning {evil(4)} {evil(7)}"],
        }
    )


def large_result(n_examples: int = 10_000) -> RunResult:
    """A regressed result with ``n_examples`` examples in total over the three suites."""
    per_suite = -(-n_examples // 3)
    result = make_result("regressed", n_examples=per_suite, seed=1)
    # Trim to the exact total so the figures reported are for n_examples.
    excess = per_suite * 3 - n_examples
    last = result.suites[-1]
    trimmed = last.model_copy(
        update={"examples": last.examples[: per_suite - excess], "n_examples": per_suite - excess}
    )
    return result.model_copy(update={"suites": [*result.suites[:-1], trimmed]})


Wording = Literal["failed", "forgiven", "improved", "mixed"]
WORDINGS: tuple[Wording, ...] = ("failed", "forgiven", "improved", "mixed")


def wording_result(which: Wording) -> RunResult:
    """A result whose flagged checks are only failed, only forgiven, only improved, or all.

    Each flagged check is the first check of one suite: qa's exact_match fails (82 -> 76),
    summarize's rouge2 is forgiven (19.84 -> 17.51, p 0.09), translate's bleu rises 13.33
    points beyond its 2.00 tolerance.
    """
    result = make_result("pass")
    flagged = {
        "failed": {"qa"},
        "forgiven": {"summarize"},
        "improved": {"translate"},
        "mixed": {"qa", "summarize", "translate"},
    }[which]
    moves = {
        "qa": ("exact_match", 82.0, 76.0, 2.5, 0.004, CheckStatus.FAIL, Verdict.REGRESSED),
        "summarize": ("rouge2", 19.84, 17.51, 2.6, 0.09, CheckStatus.FORGIVEN, Verdict.PASS),
        "translate": ("bleu", 31.12, 44.45, 2.0, 0.001, CheckStatus.IMPROVED, Verdict.IMPROVED),
    }
    suites = []
    for suite in result.suites:
        if suite.name not in flagged:
            suites.append(suite)
            continue
        metric, base, cur, half, p, status, verdict = moves[suite.name]
        summary = _summary(metric, base, cur, half_width=half, p_value=p)
        check = _check(suite.name, summary, "max_drop", 2.0, status)
        metrics = [summary if m.metric == metric else m for m in suite.metrics]
        checks = [check, *[c for c in suite.checks if c.metric != metric]]
        suites.append(
            suite.model_copy(update={"metrics": metrics, "checks": checks, "verdict": verdict})
        )
    verdicts = [s.verdict for s in suites]
    verdict = (
        Verdict.REGRESSED
        if Verdict.REGRESSED in verdicts
        else Verdict.IMPROVED
        if Verdict.IMPROVED in verdicts
        else Verdict.PASS
    )
    hints = (
        [
            "suite 'translate' improved (bleu +13.33): run `goldgate bless` to make these scores"
            " the new baseline"
        ]
        if verdict is Verdict.IMPROVED
        else []
    )
    return result.model_copy(update={"suites": suites, "verdict": verdict, "hints": hints})


def many_suites_result(n_suites: int = 300) -> RunResult:
    """A regressed result with ``n_suites`` suites, each with a failed check and moved slices."""
    base = make_result("regressed", n_examples=4)
    qa = base.suites[0]
    suites = [
        qa.model_copy(
            update={
                "name": f"suite{i:03d}",
                "checks": [c.model_copy(update={"suite": f"suite{i:03d}"}) for c in qa.checks],
            }
        )
        for i in range(n_suites)
    ]
    return base.model_copy(update={"suites": suites})


def _unchecked_example(**values: Any) -> ExampleResult:
    # model_construct without its per-call bookkeeping: every field is given, none checked.
    example = ExampleResult.__new__(ExampleResult)
    object.__setattr__(example, "__dict__", values)
    object.__setattr__(example, "__pydantic_fields_set__", set(values))
    object.__setattr__(example, "__pydantic_extra__", None)
    object.__setattr__(example, "__pydantic_private__", None)
    return example


def bulk_result(n_examples: int, *, long_text_chars: int = 60_000) -> RunResult:
    """A regressed result of ``n_examples`` examples over three suites, built directly.

    The examples are made without validation or scoring, so that a 200,000-example result
    takes about a second; example 0 of each suite carries texts of
    ``long_text_chars`` characters, to check that long texts are cut.
    """
    result = make_result("regressed", n_examples=4, seed=2)
    per_suite = -(-n_examples // 3)
    suites = []
    left = n_examples
    for suite in result.suites:
        n = min(per_suite, left)
        left -= n
        names = [m.metric for m in suite.metrics]
        examples = []
        for i in range(n):
            base = {
                m: 50.0 if i == 0 else ((i * 7919 + k * 104_729) % 10_001) / 100
                for k, m in enumerate(names)
            }
            # Example 0 (the long one) falls furthest, so every report shows it.
            move = -30.0 if i == 0 else (-30.0, -5.0, 0.0, 0.0, 4.0)[(i * 31 + 7) % 5]
            cur = {m: min(100.0, max(0.0, v + move)) for m, v in base.items()}
            long = i == 0
            text = "word " * (long_text_chars // 5) if long else f"output {i} of {suite.name}"
            examples.append(
                _unchecked_example(
                    id=f"{suite.name}-{i:06d}",
                    line=i + 1,
                    tags=[_TAGS[i % 3]],
                    input=({"question": text} if suite.name == "qa" else text),
                    references=[text + " ref"],
                    output=text + (" new" if cur != base else ""),
                    baseline_output=text,
                    scores=cur,
                    baseline_scores=base,
                    flipped_to_wrong=[],
                    flipped_to_right=[],
                    new=False,
                )
            )
        suites.append(suite.model_copy(update={"examples": examples, "n_examples": n}))
    return result.model_copy(update={"suites": suites})
