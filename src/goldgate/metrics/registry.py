"""Find metrics by name: built-ins, the ``goldgate.metrics`` entry point, ``module:function``."""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from goldgate.errors import MetricError, did_you_mean
from goldgate.metrics.base import Metric, MetricOptions, OptionError, Stats, ratio_scores

if TYPE_CHECKING:  # annotations only: the module imports numpy where it computes
    import numpy as np
    import numpy.typing as npt

ENTRY_POINT_GROUP = "goldgate.metrics"

# name -> "module:attribute" of a Metric subclass; imported on first use.
_BUILTINS: dict[str, str] = {
    "bleu": "goldgate.metrics.ngram.bleu:BLEU",
    "sentence_bleu": "goldgate.metrics.ngram.bleu:SentenceBLEU",
    "chrf": "goldgate.metrics.ngram.chrf:CHRF",
    "chrf++": "goldgate.metrics.ngram.chrf:CHRFPlusPlus",
    **{f"rouge{n}": f"goldgate.metrics.ngram.rouge:Rouge{n}" for n in range(1, 10)},
    "rougeL": "goldgate.metrics.ngram.rouge:RougeL",
    "rougeLsum": "goldgate.metrics.ngram.rouge:RougeLsum",
    "rougeW": "goldgate.metrics.ngram.rouge_perl:RougeW",
    "rougeS": "goldgate.metrics.ngram.rouge_perl:RougeS",
    "rougeSU": "goldgate.metrics.ngram.rouge_perl:RougeSU",
    "exact_match": "goldgate.metrics.exact:ExactMatch",
    "token_f1": "goldgate.metrics.exact:TokenF1",
    "length_ratio": "goldgate.metrics.length:LengthRatio",
    "embedding_similarity": "goldgate.metrics.semantic.embedding:EmbeddingSimilarity",
    "llm_judge": "goldgate.metrics.semantic.judge:LLMJudge",
    "ter": "goldgate.metrics.edit.ter:TER",
    "meteor": "goldgate.metrics.meteor.meteor:METEOR",
}


def builtin_metric_names() -> list[str]:
    """Names of the metrics goldgate ships."""
    return list(_BUILTINS)


def _entry_point_metrics() -> dict[str, Any]:
    # Imported here: importlib.metadata (and the email package under it) costs ~20 ms and a few
    # MB, which a run of built-in metrics never needs.
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def metric_names() -> list[str]:
    """Every metric name that ``create_metric`` accepts without a ``module:function`` path."""
    return builtin_metric_names() + sorted(set(_entry_point_metrics()) - set(_BUILTINS))


class _NoOptions(MetricOptions):
    pass


class FunctionMetric(Metric[MetricOptions]):
    """A user's per-example function ``(candidate, references) -> float`` on 0–100, averaged."""

    Options: ClassVar[type[MetricOptions]] = _NoOptions
    stat_names = ("score_sum", "count")

    def __init__(self, name: str, function: Callable[..., float], options: MetricOptions) -> None:
        super().__init__(options)
        self.name = name  # type: ignore[misc]
        self.function = function
        # An error rate written as a function says so with `function.higher_is_better = False`.
        self.higher_is_better = bool(getattr(function, "higher_is_better", True))  # type: ignore[misc]

    def __reduce__(self) -> tuple[Any, ...]:
        return (FunctionMetric, (self.name, self.function, self.options))

    def preprocess_key(self) -> Any:
        return ("raw",)

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        value = self.function(candidate, list(references))
        try:
            return (float(value), 1.0)
        except (TypeError, ValueError):
            shown = repr(value)
            shown = shown if len(shown) <= 80 else shown[:80] + "..."
            raise MetricError(f"returned {shown}, not a number") from None

    def score_stats(self, stats: Sequence[float]) -> float:
        return stats[0] / stats[1] if stats[1] else 0.0

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("custom", self.name)]

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(FunctionMetric):
            return super().example_scores(stats)
        return ratio_scores(stats[:, 0], stats[:, 1])


def _load_object(path: str, label: str) -> Any:
    module_name, _, attribute = path.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise MetricError(f"{label}: cannot import module {module_name!r}: {exc}") from None
    for part in attribute.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise MetricError(f"{label}: module {module_name!r} has no {attribute!r}") from None
    return obj


def _build(name: str, obj: Any, options: Mapping[str, Any], where: str) -> Metric[Any]:
    if inspect.isclass(obj) and issubclass(obj, Metric):
        return obj(_parse_options(name, obj.Options, options, where))
    if callable(obj):
        _check_metric_function(name, obj, where)
        return FunctionMetric(name, obj, _parse_options(name, _NoOptions, options, where))
    raise MetricError(f"{where}{name!r} is neither a Metric subclass nor a function")


def _check_metric_function(name: str, obj: Any, where: str) -> None:
    """Refuse what is callable but no metric (``os:system``, ``builtins:print``, a class).

    A metric function is Python code declaring ``(candidate, references)``; anything else
    would be handed model output as its arguments, with effects no one asked for.
    """
    expected = "a metric function takes (candidate, references) and returns a number"
    if inspect.isclass(obj) or inspect.isbuiltin(obj) or not _is_python_callable(obj):
        kind = (
            "a class"
            if inspect.isclass(obj)
            else "a built-in function"
            if inspect.isbuiltin(obj)
            else f"a {type(obj).__name__} object"
        )
        raise MetricError(
            f"{where}{name!r} is {kind}, not a metric: {expected} (or give a Metric subclass)"
        )
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        raise MetricError(f"{where}{name!r}: cannot read its parameters; {expected}") from None
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    required = [p for p in signature.parameters.values() if p.default is p.empty]
    if len(positional) < 2 or any(
        p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        and p not in positional[:2]
        for p in required
    ):
        raise MetricError(f"{where}{name!r} takes {signature}, not a metric: {expected}")


def _is_python_callable(obj: Any) -> bool:
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return True
    if isinstance(obj, functools.partial):
        return _is_python_callable(obj.func)
    call = getattr(type(obj), "__call__", None)  # noqa: B004 (a callable object's own method)
    return inspect.isfunction(call)


def _parse_options(
    name: str, model: type[MetricOptions], options: Mapping[str, Any], where: str
) -> MetricOptions:
    known = model.option_names()
    for key in options:
        if key not in known:
            hint = did_you_mean(key, known)
            valid = ", ".join(sorted(known)) or "none"
            raise MetricError(
                f"{where}unknown option {key!r} for metric {name!r}{hint}; valid options: {valid}"
            )
    try:
        return model.parse(options)
    except OptionError as exc:
        raise MetricError(
            f"{where}bad value for option {exc.key!r} of metric {name!r}: {exc.reason}"
        ) from None
    except ValueError as exc:  # a plugin's own cross-option check in __post_init__
        raise MetricError(f"{where}bad options for metric {name!r}: {exc}") from None


def create_metric(
    name: str, options: Mapping[str, Any] | None = None, *, where: str = ""
) -> Metric[Any]:
    """Build a metric by name with options; ``where`` prefixes errors (``file: key: ``)."""
    options = dict(options or {})
    if name in _BUILTINS:
        return _build(name, _load_object(_BUILTINS[name], name), options, where)
    plugins = _entry_point_metrics()
    if name in plugins:
        return _build(name, plugins[name].load(), options, where)
    if ":" in name:
        return _build(name, _load_object(name, f"{where}metric {name!r}"), options, where)
    hint = did_you_mean(name, metric_names())
    raise MetricError(f"{where}unknown metric {name!r}{hint}")


#: Where a spec's options begin: a colon, then an option's name and "=".
_OPTIONS_START = re.compile(r":(?=\s*[A-Za-z_]\w*\s*=)")


def parse_metric_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``bleu:tokenize=intl,lowercase=true`` into a name and string options.

    A custom ``package.module:function`` name may carry options after a second colon. The
    options start at the first colon followed by ``key=``, so a value may hold colons itself
    (``llm_judge:base_url=http://127.0.0.1:8000/v1,model=m``).
    """
    name, options_text = spec, ""
    head, sep, tail = spec.rpartition(":")
    start = _OPTIONS_START.search(spec)
    if start is not None:
        name, options_text = spec[: start.start()], spec[start.end() :]
    elif sep and "=" in tail:
        name, options_text = head, tail
    elif sep and "=" in spec:
        raise MetricError(f"bad metric spec {spec!r}: options go after the last ':'")
    elif sep and head in _BUILTINS:
        raise MetricError(f"bad metric spec {spec!r}: expected key=value, got {tail!r}")
    options: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in options_text.split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise MetricError(f"bad metric spec {spec!r}: expected key=value, got {item!r}")
        options[key.strip()] = value.strip()
    if not name:
        raise MetricError(f"bad metric spec {spec!r}: no metric name")
    return name, options


def metric_from_spec(spec: str, *, where: str = "") -> Metric[Any]:
    """Build a metric from a command-line spec such as ``rougeLsum:use_stemmer=true``."""
    name, options = parse_metric_spec(spec)
    return create_metric(name, options, where=where)


def builtin_higher_is_better(spec: str) -> bool | None:
    """A built-in metric's direction from its spec (``ter`` → False); None for any other.

    Imports no code a user wrote (no ``module:function``, no entry point): for reading a saved
    file, such as a baseline, which does not record directions.
    """
    try:
        name, _ = parse_metric_spec(spec)
    except MetricError:
        return None
    path = _BUILTINS.get(name)
    if path is None:
        return None
    try:
        metric = _load_object(path, name)
    except MetricError:
        return None
    return bool(metric.higher_is_better)
