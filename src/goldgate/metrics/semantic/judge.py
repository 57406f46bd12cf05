"""``llm_judge``: a rubric-graded score from any OpenAI-compatible chat-completions endpoint.

Each example is shown to the judge (the fields configured: input, candidate, references)
with the rubric, and the judge must reply with exactly one JSON object
``{"score": <number on the scale>, "rationale": "<short text>"}``. A reply that does not
parse, or gives a score off the scale, is retried and then an error naming the example's id —
never a silent 0. The score is mapped to 0–100 linearly from the configured scale.

Reproducible where the endpoint allows it: temperature 0 and a seed are sent (judge sample
``k`` of ``samples`` uses ``seed + k``), and every judgment is cached on disk keyed by the
endpoint, the model, the rubric and the texts (:mod:`goldgate.metrics.semantic.judge_cache`), so a
rerun re-asks nothing it has asked before. With ``samples > 1`` an example's statistics hold
the sum of its judgments and their count (its score is their mean) and each judgment apart:
the paired bootstrap draws the judgments with replacement within every drawn example, as it
draws a system's samples (:func:`goldgate.gate.stats.compare_many`), so a delta within the
judge's disagreement with itself is not called significant. ``judge_spread`` (the mean
per-example standard deviation of the judgments) is reported beside the score, with the
tokens and the cost they represent.

The API key is read from the environment variable the configuration names, sent only in the
``Authorization`` header, and is never part of a signature, the cache, a report or an error.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Literal
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from goldgate.errors import GoldgateError, MetricError
from goldgate.metrics.base import MetricOptions, option, ratio_scores
from goldgate.metrics.batch import Batch, BatchMetric, BatchStats, CallTally
from goldgate.metrics.budget import Budget, BudgetExceeded, current_budget
from goldgate.metrics.semantic.judge_cache import JudgmentCache, request_key
from goldgate.metrics.semantic.judge_costs import CallCosts
from goldgate.metrics.semantic.judge_http import (
    CallStats,
    Endpoint,
    JudgeCallError,
    Judgment,
    judge_once,
    reply_limit,
)

Field = Literal["input", "candidate", "references"]
ResponseFormat = Literal["json_object", "json_schema", "none"]
_LOG = logging.getLogger(__name__)
_RATIONALE_CHARS = 300

_INSTRUCTIONS = """\
You are grading one answer. Follow the rubric.

Rubric:
{rubric}

Reply with exactly one JSON object and nothing else:
{{"score": <a number from {low:g} to {high:g}>, "rationale": "<one or two sentences>"}}"""

_SCHEMA = {
    "type": "object",
    "properties": {"score": {"type": "number"}, "rationale": {"type": "string"}},
    "required": ["score", "rationale"],
    "additionalProperties": False,
}


class JudgeOptions(MetricOptions):
    """The endpoint, the model, the rubric and how the judge is asked."""

    base_url: str | None = None  # e.g. https://api.openai.com/v1, http://localhost:11434/v1
    model: str | None = None
    api_key_env: str | None = None  # the NAME of the variable holding the key; None: no key
    rubric: str | None = None  # the rubric itself, or:
    rubric_file: str | None = None  # a file holding it, relative to the configuration
    scale_min: float = 1.0
    scale_max: float = 5.0
    fields: tuple[Field, ...] = ("input", "candidate", "references")
    samples: int = option(default=1, ge=1, le=50)
    temperature: float = option(default=0.0, ge=0.0, le=2.0)
    seed: int | None = 0
    max_tokens: int = option(default=400, ge=16)
    response_format: ResponseFormat = "json_object"
    concurrency: int = option(default=4, ge=1, le=256)
    timeout_s: float = option(default=60.0, ge=0.001, le=3600)
    max_retries: int = option(default=3, ge=0, le=20)
    backoff_s: float = option(default=1.0, ge=0.0, le=60.0)
    price_input_per_mtok: float = option(default=0.0, ge=0.0)  # USD per million prompt tokens
    price_output_per_mtok: float = option(default=0.0, ge=0.0)

    def __post_init__(self) -> None:
        if not self.base_url:
            raise ValueError("base_url is required (the endpoint, e.g. https://host/v1)")
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"base_url must be an http(s) URL, got {self.base_url!r}")
        if parts.username or parts.password or parts.query:
            # Such URLs carry secrets that would end up in signatures, caches and reports.
            raise ValueError("base_url must not hold credentials or a query: use api_key_env")
        if not self.model:
            raise ValueError("model is required (the judge model's name at the endpoint)")
        if (self.rubric is None) == (self.rubric_file is None):
            raise ValueError("give exactly one of rubric (the text) and rubric_file (a path)")
        if not self.scale_max > self.scale_min:
            raise ValueError(f"scale_max ({self.scale_max:g}) must exceed scale_min")
        if "candidate" not in self.fields:
            raise ValueError("fields must include 'candidate': the judge grades it")
        if len(set(self.fields)) != len(self.fields):
            raise ValueError("fields lists a field twice")
        if self.api_key_env is not None and not self.api_key_env.strip():
            raise ValueError("api_key_env is the name of an environment variable")


#: An example's statistics: its judgments pooled (then, with samples > 1, each judgment's score).
_POOLED: tuple[str, ...] = (
    "score_sum",
    "judgments",
    "examples",
    "spread_sum",
    "prompt_tokens",
    "completion_tokens",
)


class LLMJudge(BatchMetric[JudgeOptions]):
    """Rubric-graded 0–100 score from a chat-completions judge, averaged over examples."""

    name = "llm_judge"
    Options = JudgeOptions
    stat_names = _POOLED

    def __init__(self, options: JudgeOptions) -> None:
        super().__init__(options)
        if options.samples > 1:
            # Each judgment kept apart as well, so the bootstrap can draw them (bootstrap_stats).
            judgments = tuple(f"judgment_{k}" for k in range(1, options.samples + 1))
            self.stat_names = (*_POOLED, *judgments)  # type: ignore[misc]
        self._rubric: str | None = None
        #: this run's traffic: requests sent, retries, judgments served from the cache
        self.calls = CallStats()
        self.cache_hits = 0

    # -- configuration ------------------------------------------------------------------------
    @property
    def rubric(self) -> str:
        """The rubric text (read from its file the first time)."""
        if self._rubric is None:
            if self.options.rubric is not None:
                self._rubric = self.options.rubric
            else:
                path = self.context.resolve(self.options.rubric_file or "")
                try:
                    self._rubric = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as exc:
                    reason = getattr(exc, "strerror", None) or exc
                    raise MetricError(
                        f"llm_judge: cannot read rubric_file {path}: {reason}"
                    ) from None
            if not self._rubric.strip():
                raise MetricError("llm_judge: the rubric is empty")
        return self._rubric

    def call_tally(self) -> CallTally:
        return CallTally(self.calls.requests, self.calls.retries, self.cache_hits)

    def rubric_hash(self) -> str:
        """SHA-256 of the rubric text."""
        return hashlib.sha256(self.rubric.encode("utf-8")).hexdigest()

    def signature_fields(self) -> list[tuple[str, str]]:
        o = self.options
        seed = "none" if o.seed is None else str(o.seed)
        return [
            ("judge", o.model or ""),
            ("url", o.base_url or ""),
            ("rubric", self.rubric_hash()[:12]),
            ("scale", f"{o.scale_min:g}-{o.scale_max:g}"),
            ("fields", "+".join(o.fields)),
            ("n", str(o.samples)),
            ("temp", f"{o.temperature:g}"),
            ("seed", seed),
            ("fmt", o.response_format),
        ]

    def _endpoint(self) -> Endpoint:
        o = self.options
        key = None
        if o.api_key_env is not None:
            key = self.context.environ.get(o.api_key_env)
            if not key:
                raise MetricError(
                    f"llm_judge: the environment variable {o.api_key_env} (api_key_env) is not"
                    " set; it must hold the endpoint's API key"
                )
        return Endpoint(
            base_url=o.base_url or "",
            api_key=key,
            timeout_s=o.timeout_s,
            max_retries=o.max_retries,
            backoff_s=o.backoff_s,
            max_reply_bytes=reply_limit(o.max_tokens),
        )

    # -- asking -------------------------------------------------------------------------------
    def request(
        self, candidate: str, references: Sequence[str], input: Any, k: int
    ) -> dict[str, Any]:
        """The chat-completions request body for judge sample ``k`` of one example."""
        o = self.options
        parts = []
        for name in o.fields:
            if name == "input":
                text = input if isinstance(input, str) else json.dumps(input, ensure_ascii=False)
                parts.append(f"## Input\n{text}")
            elif name == "candidate":
                parts.append(f"## Answer to grade\n{candidate}")
            else:
                listed = "\n".join(f"{i}. {ref}" for i, ref in enumerate(references, start=1))
                parts.append(f"## Reference answers\n{listed}")
        system = _INSTRUCTIONS.format(rubric=self.rubric.strip(), low=o.scale_min, high=o.scale_max)
        body: dict[str, Any] = {
            "model": o.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": "\n\n".join(parts)},
            ],
            "temperature": o.temperature,
            "max_tokens": o.max_tokens,
        }
        if o.seed is not None:
            body["seed"] = o.seed + k
        if o.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        elif o.response_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "judgment", "strict": True, "schema": _SCHEMA},
            }
        return body

    def parse(self, content: str) -> tuple[float, str]:
        """``(score, rationale)`` from the judge's reply; ``ValueError`` saying why not."""
        try:
            document = json.loads(content)
        except (ValueError, RecursionError):  # RecursionError: nested past the parser's stack
            raise ValueError(f"not a JSON object: {content.strip()[:80]!r}") from None
        if not isinstance(document, dict) or set(document) != {"score", "rationale"}:
            raise ValueError('expected exactly {"score": ..., "rationale": ...}')
        score, rationale = document["score"], document["rationale"]
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise ValueError(f"score is {score!r}, not a number")
        if (
            not math.isfinite(score)
            or not self.options.scale_min <= score <= self.options.scale_max
        ):
            raise ValueError(
                f"score {score!r} is off the scale {self.options.scale_min:g}"
                f"–{self.options.scale_max:g}"
            )
        if not isinstance(rationale, str):
            raise ValueError("rationale is not a string")
        return float(score), rationale

    def corpus_stats(self, batch: Batch) -> BatchStats:
        o = self.options
        n = len(batch.candidates)
        if n == 0:
            return BatchStats([])
        inputs = batch.inputs if batch.inputs is not None else [None] * n
        if "input" in o.fields and batch.inputs is None:
            raise MetricError("llm_judge: fields include 'input' but the data has no inputs")
        endpoint = self._endpoint()
        # keys[i][k]: the judgment of example i, judge sample k; equal requests are asked once.
        keys: list[list[str]] = []
        bodies: dict[str, tuple[int, dict[str, Any]]] = {}
        for i in range(n):
            row = []
            for k in range(o.samples):
                body = self.request(batch.candidates[i], batch.references[i], inputs[i], k)
                key = request_key(endpoint.base_url, body, k)
                row.append(key)
                bodies.setdefault(key, (i, body))
            keys.append(row)
        cache_dir = self.context.cache_dir
        cache = JudgmentCache(
            cache_dir / "judge" if cache_dir is not None else None,
            endpoint.base_url,
            o.model or "",
            scale=(o.scale_min, o.scale_max),
            wanted=bodies.keys(),
            max_reply_bytes=endpoint.max_reply_bytes,
        )
        jobs = {key: job for key, job in bodies.items() if cache.get(key) is None}
        self.cache_hits += sum(cache.get(key) is not None for row in keys for key in row)
        if jobs:
            budget = current_budget()
            costs = None
            if budget is not None:  # estimated from the judgments cached, then this run's
                costs = CallCosts(o.price_input_per_mtok, o.price_output_per_mtok, o.max_tokens)
                for key, (_, body) in bodies.items():
                    known = cache.get(key)
                    if known is not None:
                        costs.observe(body, known)
            self._ask(endpoint, cache, jobs, batch, budget, costs)
        rows = []
        notes: list[str | None] = []
        for row in keys:
            judgments = [cache.get(key) for key in row]
            assert all(j is not None for j in judgments)  # every job put its judgment
            rows.append(self._example_stats([j for j in judgments if j is not None]))
            first = judgments[0]
            notes.append(first.rationale[:_RATIONALE_CHARS] if first is not None else None)
        _LOG.info(
            "llm_judge %s: %d requests (%d retries), %d judgments from the cache",
            o.model,
            self.calls.requests,
            self.calls.retries,
            self.cache_hits,
        )
        return BatchStats(rows, notes)

    def _ask(
        self,
        endpoint: Endpoint,
        cache: JudgmentCache,
        jobs: dict[str, tuple[int, dict[str, Any]]],
        batch: Batch,
        budget: Budget | None = None,
        costs: CallCosts | None = None,
    ) -> None:
        """Run the jobs ``concurrency`` at a time; the first failure stops new ones. With a
        ``budget``, each call books its estimated cost first, and is not made past it."""

        def one(key: str, body: dict[str, Any]) -> None:
            if budget is None or costs is None:
                cache.put(key, judge_once(endpoint, body, self.parse, self.calls))
                return
            estimate = costs.estimate(body)
            budget.reserve(estimate, f"llm_judge, example {batch.example_id(jobs[key][0])!r}")
            try:
                judgment = judge_once(endpoint, body, self.parse, self.calls)
            except BaseException:
                budget.release(estimate)
                raise
            budget.settle(estimate, costs.cost(judgment))
            costs.observe(body, judgment)
            cache.put(key, judgment)

        with ThreadPoolExecutor(max_workers=self.options.concurrency) as pool:
            futures: dict[Future[None], int] = {
                pool.submit(one, key, body): index for key, (index, body) in jobs.items()
            }
            try:
                done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            except BaseException:  # Ctrl-C: finish what is in flight (it is cached), start no more
                for future in futures:
                    future.cancel()
                raise
            if any(f.exception() is not None for f in done):
                for future in futures:
                    future.cancel()
        # The pool has let the calls in flight finish (and be cached); of the failures, the
        # first example's is reported, so the message does not depend on thread timing.
        failed = [f for f in futures if not f.cancelled() and f.exception() is not None]
        if budget is not None and any(isinstance(f.exception(), BudgetExceeded) for f in failed):
            raise BudgetExceeded(budget.message())  # what was spent once the calls in flight ended
        if failed:
            first = min(failed, key=lambda f: futures[f])
            exc = first.exception()
            example = batch.example_id(futures[first])
            if isinstance(exc, GoldgateError):
                raise JudgeCallError(f"llm_judge: example {example!r}: {exc}") from None
            detail = endpoint.redact(f"{type(exc).__name__}: {exc}")
            raise JudgeCallError(f"llm_judge: example {example!r}: {detail}") from None

    def _example_stats(self, judgments: list[Judgment]) -> tuple[float, ...]:
        o = self.options
        scores = [100.0 * (j.score - o.scale_min) / (o.scale_max - o.scale_min) for j in judgments]
        mean = math.fsum(scores) / len(scores)
        spread = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores))
        pooled = (
            math.fsum(scores),
            float(len(scores)),
            1.0,
            spread,
            float(sum(j.prompt_tokens for j in judgments)),
            float(sum(j.completion_tokens for j in judgments)),
        )
        return pooled if o.samples == 1 else (*pooled, *scores)

    def bootstrap_stats(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """One pseudo-sample per judgment: ``(samples, n, k)`` → ``(samples × judgments, n, k)``.

        Row ``s * J + j`` holds judgment ``j`` of system sample ``s`` as a one-judgment
        example (score, 1 judgment, 1 example). Its score, the mean over pseudo-samples, is
        the pooled score (every example has ``J`` judgments); the two-level bootstrap then
        draws judgments with replacement within each drawn example.
        """
        judgments = self.options.samples
        width = len(_POOLED)
        if judgments == 1 or stats.shape[2] < width + judgments:
            return stats  # one judgment each, or statistics that do not keep them apart
        system_samples, n, k = stats.shape
        each = stats[:, :, width : width + judgments].transpose(0, 2, 1)  # (samples, J, n)
        out = np.zeros((system_samples * judgments, n, k), dtype=np.float64)
        out[:, :, 0] = each.reshape(system_samples * judgments, n)
        out[:, :, 1] = 1.0
        out[:, :, 2] = 1.0
        return out

    # -- scores -------------------------------------------------------------------------------
    def score_stats(self, stats: Sequence[float]) -> float:
        return stats[0] / stats[1] if stats[1] else 0.0

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        o = self.options
        cost = (stats[4] * o.price_input_per_mtok + stats[5] * o.price_output_per_mtok) / 1_000_000
        return {
            "judgments": int(stats[1]),
            "judge_spread": stats[3] / stats[2] if stats[2] else 0.0,
            "prompt_tokens": int(stats[4]),
            "completion_tokens": int(stats[5]),
            "cost_usd": round(cost, 6),
        }

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(LLMJudge):
            return super().example_scores(stats)
        return ratio_scores(stats[:, 0], stats[:, 1])
