"""The metric contract: texts → additive per-example statistics → scores.

Every metric turns one example (a candidate and its references) into a flat tuple of
numbers that can be summed across examples. A corpus score, a tag slice and a bootstrap
resample are all computed from such sums, so nothing is ever tokenised twice.
"""

from __future__ import annotations

import math
import types
from abc import ABC, abstractmethod
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    Self,
    TypeVar,
    Union,
    dataclass_transform,
    get_args,
    get_origin,
    get_type_hints,
)

from goldgate._version import __version__
from goldgate.errors import did_you_mean

if TYPE_CHECKING:  # annotations only: importing the metric contract needs no numpy
    import numpy as np
    import numpy.typing as npt

    from goldgate.metrics.text_batch import TextBatch

Stats = tuple[float, ...]

T = TypeVar("T")
# pydantic's lax spellings of a boolean (any case), kept so no existing config changes meaning.
_BOOLEANS = {
    **dict.fromkeys(("true", "t", "yes", "y", "on", "1"), True),
    **dict.fromkeys(("false", "f", "no", "n", "off", "0"), False),
}
_TYPE_NAMES = {
    type(None): "null",
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
}
_JSON_TYPES = {type(None): "null", bool: "boolean", int: "integer", float: "number", str: "string"}


class OptionError(ValueError):
    """A bad value for the option ``key``; the message says why."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason


def option(
    *,
    default: T,
    ge: float | None = None,
    le: float | None = None,
    allow_inf_nan: bool = False,
    parse: Callable[[Any], Any] | None = None,
) -> T:
    """An option's default with bounds, or with ``parse`` run on the raw value before its type."""
    metadata = {"ge": ge, "le": le, "allow_inf_nan": allow_inf_nan, "parse": parse}
    return field(default=default, metadata=metadata)


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(field, option))
@dataclass(frozen=True, kw_only=True)
class MetricOptions:
    """Base of every metric's options: a frozen dataclass, validated by ``parse``.

    Subclasses are declared with annotations and defaults only (``weight: float = 1.0``), as
    when this was a pydantic model, and become frozen dataclasses themselves: hashable, so
    options can be part of ``preprocess_key``. The metric engine needs no pydantic, whose
    import alone used to cost ``goldgate score`` ~20 MB and ~100 ms.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclass(frozen=True, kw_only=True)(cls)

    @classmethod
    def option_names(cls) -> list[str]:
        """The options' names, in declaration order."""
        return [spec.name for spec in fields(cls)]

    @classmethod
    def parse(cls, values: Mapping[str, Any]) -> Self:
        """Options from raw values: command-line strings (``"true"``, ``"0.1"``) or YAML values.

        Raises ``OptionError`` naming the first bad or unknown option.
        """
        hints = _field_types(cls)
        for key in values:
            if key not in hints:
                raise OptionError(key, f"unknown option; valid options: {', '.join(hints)}")
        parsed: dict[str, Any] = {}
        for spec in fields(cls):
            if spec.name not in values:
                if spec.default is MISSING and spec.default_factory is MISSING:
                    raise OptionError(spec.name, "a value is required")
                continue
            try:
                parsed[spec.name] = _parse_value(values[spec.name], hints[spec.name], spec.metadata)
            except ValueError as exc:
                raise OptionError(spec.name, str(exc)) from None
        return cls(**parsed)

    @classmethod
    def json_schema(cls) -> dict[str, Any]:
        """A JSON Schema of these options for editors: types, choices, defaults, bounds."""
        hints = _field_types(cls)
        properties: dict[str, Any] = {}
        for spec in fields(cls):
            schema = {"title": spec.name.replace("_", " ").title(), **_schema(hints[spec.name])}
            if spec.default is not MISSING:
                default = spec.default
                schema["default"] = list(default) if isinstance(default, tuple) else default
            if spec.metadata.get("ge") is not None:
                schema["minimum"] = spec.metadata["ge"]
            if spec.metadata.get("le") is not None:
                schema["maximum"] = spec.metadata["le"]
            properties[spec.name] = schema
        document: dict[str, Any] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        if cls.__doc__:
            document["description"] = cls.__doc__.strip()
        return document


OptionsT = TypeVar("OptionsT", bound=MetricOptions)


_FIELD_TYPES: dict[type[MetricOptions], dict[str, Any]] = {}


def _field_types(cls: type[MetricOptions]) -> dict[str, Any]:
    # Resolved on first use, not at class creation: a module may define an alias after a class.
    if cls not in _FIELD_TYPES:
        hints = get_type_hints(cls)
        _FIELD_TYPES[cls] = {spec.name: hints[spec.name] for spec in fields(cls)}
    return _FIELD_TYPES[cls]


def _parse_value(value: Any, hint: Any, metadata: Mapping[str, Any]) -> Any:
    if metadata.get("parse") is not None:
        value = metadata["parse"](value)
    result = _coerce(value, hint)
    if (
        isinstance(result, float)
        and not math.isfinite(result)
        and not metadata.get("allow_inf_nan")
    ):
        raise ValueError(f"expected a finite number, got {result}")
    if result is not None:
        if metadata.get("ge") is not None and result < metadata["ge"]:
            raise ValueError(f"must be at least {metadata['ge']}, got {result}")
        if metadata.get("le") is not None and result > metadata["le"]:
            raise ValueError(f"must be at most {metadata['le']}, got {result}")
    return result


class _Mismatch(Exception):
    pass


def _coerce(value: Any, hint: Any) -> Any:
    """``value`` as an instance of the type ``hint``; ValueError saying what was expected."""
    try:
        return _convert(value, hint)
    except _Mismatch:
        hint_text = ""
        if get_origin(hint) is Literal and isinstance(value, str):
            hint_text = did_you_mean(value, [str(choice) for choice in get_args(hint)])
        raise ValueError(f"expected {_describe(hint)}, got {value!r}{hint_text}") from None


def _convert(value: Any, hint: Any) -> Any:
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        for choice in args:
            same_kind = isinstance(value, type(choice)) and (
                isinstance(value, bool) == isinstance(choice, bool)
            )
            if same_kind and value == choice:
                return choice
    elif origin is Union or origin is types.UnionType:
        for arg in args:
            try:
                return _convert(value, arg)
            except _Mismatch:
                pass
    elif origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        # Lists become tuples: options must stay hashable.
        if isinstance(value, list | tuple):
            return tuple(_convert(item, args[0]) for item in value)
    elif hint is type(None):
        if value is None:
            return None
    elif hint is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _BOOLEANS:
            return _BOOLEANS[value.lower()]
        if isinstance(value, int | float) and value in (0, 1):
            return bool(value)
    elif hint is int:
        return _convert_int(value)
    elif hint is float:
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        elif isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif hint is str:
        if isinstance(value, str):
            return str(value)
    elif hint is Any or (isinstance(hint, type) and isinstance(value, hint)):
        return value
    raise _Mismatch


def _convert_int(value: Any) -> int:
    # A bool is not a count, though Python says it is an int.
    if isinstance(value, bool):
        raise _Mismatch
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            try:
                value = float(value)
            except ValueError:
                raise _Mismatch from None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _Mismatch


def _describe(hint: Any) -> str:
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return "one of " + ", ".join(repr(choice) for choice in args)
    if origin is Union or origin is types.UnionType:
        return " or ".join(_describe(arg) for arg in args)
    if origin is tuple:
        return f"a list, each item {_describe(args[0])}"
    return str(_TYPE_NAMES.get(hint) or getattr(hint, "__name__", hint))


def _schema(hint: Any) -> dict[str, Any]:
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        schema: dict[str, Any] = {"enum": list(args)}
        if all(isinstance(choice, str) for choice in args):
            schema["type"] = "string"
        return schema
    if origin is Union or origin is types.UnionType:
        return {"anyOf": [_schema(arg) for arg in args]}
    if origin is tuple:
        return {"type": "array", "items": _schema(args[0])}
    return {"type": _JSON_TYPES[hint]} if hint in _JSON_TYPES else {}


@dataclass(frozen=True)
class Signature:
    """Every setting that changes a metric's value, printed sacrebleu-style.

    ``nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:0.1.0``
    """

    metric: str
    fields: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        return "|".join(f"{key}:{value}" for key, value in self.fields)

    def with_fields(self, **extra: str) -> Signature:
        return Signature(self.metric, self.fields + tuple(extra.items()))


@dataclass(frozen=True)
class Score:
    """A metric's score on the 0–100 scale, with its signature and components."""

    metric: str
    score: float
    signature: str
    components: dict[str, Any] = field(default_factory=dict)


def nrefs_label(reference_counts: Sequence[int]) -> str:
    """sacrebleu's nrefs field: the count when every example has the same, else 'var'."""
    distinct = set(reference_counts)
    if len(distinct) == 1:
        return str(next(iter(distinct)))
    return "var" if distinct else "0"


class Metric(ABC, Generic[OptionsT]):
    """A reference-based metric. Subclasses set ``name``, ``Options`` and the four hooks.

    The pipeline the engine runs:

    1. ``preprocess(text)`` for every candidate and reference. Metrics whose ``preprocess_key``
       is equal share the result, so ROUGE-1, ROUGE-2 and ROUGE-L tokenise a text once.
    2. ``example_stats(candidate, references)`` → additive statistics for one example.
    3. ``score_stats(summed)`` → the corpus score (0–100) from summed statistics.
    4. ``example_score(stats)`` → the sentence-level score of one example (0–100);
       ``example_scores(array)`` gives it for every row of an ``(n, k)`` array at once.
    """

    name: ClassVar[str]
    Options: ClassVar[type[MetricOptions]]
    #: Names of the additive statistics, in order.
    stat_names: ClassVar[tuple[str, ...]] = ()
    #: True when an example is simply right or wrong (0 or 100), so flips can be counted.
    binary: ClassVar[bool] = False
    #: The metric's direction. False for an error rate such as TER: the gate then reads a rise
    #: as the "drop" of ``max_drop``, a fall as an improvement, and reports colour it so.
    higher_is_better: ClassVar[bool] = True

    def __init__(self, options: OptionsT) -> None:
        self.options: OptionsT = options

    # -- text preprocessing, shared between metrics with the same key ---------------------
    def preprocess_key(self) -> Hashable:
        """Identifies what ``preprocess`` does; metrics with equal keys share its results."""
        return (type(self).__name__, self.options)

    def preprocess(self, text: str) -> Any:
        """Turn a text into what ``example_stats`` consumes (tokens, n-gram counts, ...)."""
        return text

    # -- statistics -------------------------------------------------------------------------
    def batch_stats(self, batch: TextBatch) -> Any:
        """Every example's statistics of a batch at once, or None to go example by example.

        Optional, for speed: an ``(n, k)`` float64 array (or a list of rows) equal, value
        for value, to ``example_stats`` of each example of ``batch`` (a
        :class:`~goldgate.metrics.text_batch.TextBatch`).
        """
        return None

    @abstractmethod
    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        """Additive statistics of one example from preprocessed texts."""

    @abstractmethod
    def score_stats(self, stats: Sequence[float]) -> float:
        """The corpus score on the 0–100 scale from statistics summed over examples."""

    def example_score(self, stats: Sequence[float]) -> float:
        """The sentence-level score of one example; the corpus formula by default."""
        return self.score_stats(stats)

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``example_score`` of every row of an ``(n, k)`` statistics array, as ``(n,)`` float64.

        This default calls ``example_score`` row by row, so a metric that defines only that
        keeps working. The built-in metrics override it with array arithmetic giving the very
        same floats (the same operations in the same order; ``math``'s log and exp where the
        scalar code uses them), since at a million examples the calls alone cost seconds.
        """
        import numpy as np

        score = self.example_score
        return np.fromiter(
            (score(row) for row in stats.tolist()), dtype=np.float64, count=stats.shape[0]
        )

    def _scalar_scores_replaced(self, owner: type[Any]) -> bool:
        """True when this metric's class redefines ``example_score`` or ``score_stats`` below
        ``owner``, whose vectorised ``example_scores`` then no longer reproduces them."""
        cls = type(self)
        return (
            cls.example_score is not owner.example_score or cls.score_stats is not owner.score_stats
        )

    def components(self, stats: Sequence[float]) -> dict[str, Any]:
        """Extra figures reported beside the score (precision, recall, brevity penalty...)."""
        return {}

    def bootstrap_stats(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """What the paired bootstrap resamples, from a ``(samples, n, k)`` statistics array.

        The statistics themselves by default. A metric whose example statistics pool several
        noisy measurements (an LLM judge asked ``samples`` times) returns one pseudo-sample
        per measurement instead, so that the bootstrap draws them within each example as it
        draws a system's samples, and the interval carries their noise. The score of the
        returned array must equal that of ``stats``.
        """
        return stats

    # -- signature --------------------------------------------------------------------------
    @abstractmethod
    def signature_fields(self) -> list[tuple[str, str]]:
        """Settings that change this metric's value, as (key, value) pairs."""

    def signature(
        self, reference_counts: Sequence[int] = (), *, nrefs: str | None = None
    ) -> Signature:
        """The signature, with nrefs from the data (or ``nrefs`` as given: the label
        :func:`nrefs_label` gave for them) and goldgate's version appended."""
        fields = [("nrefs", nrefs if nrefs is not None else nrefs_label(reference_counts))]
        fields += self.signature_fields()
        fields.append(("version", __version__))
        return Signature(self.name, tuple(fields))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its options in a scoring worker: what __init__ derives from them (a
        # stemming tokenizer, a compiled regex) need not be picklable itself.
        return (type(self), (self.options,))


def ratio_scores(
    numerator: npt.NDArray[np.float64],
    denominator: npt.NDArray[np.float64],
    scale: float | None = None,
) -> npt.NDArray[np.float64]:
    """``scale * numerator / denominator if denominator else 0.0`` element-wise, as floats.

    The vectorised form of the scalar scores written that way (exact match, ROUGE, a mean
    over examples with ``scale`` None): the same two operations in the same order, and a
    zero (or -0.0) denominator gives 0.0 while a NaN one divides, as Python's ``if`` does.
    """
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        top = numerator if scale is None else scale * numerator
        return np.where(denominator != 0, top / denominator, 0.0)


def sum_stats(rows: Sequence[Sequence[float]], width: int | None = None) -> list[float]:
    """Column sums of per-example statistics (an empty corpus sums to zeros).

    Added left to right, as sacrebleu's ``sum_of_lists`` and the SQuAD script's loop add
    them: the builtin ``sum`` is compensated for floats since Python 3.12, so TER's mean
    reference lengths and F1's fractions would sum differently on each version.
    """
    if not rows:
        return [0.0] * (width or 0)
    return [_added(column) for column in zip(*rows, strict=True)]


def _added(values: Iterable[float]) -> float:
    """``sum(values)`` as Python 3.11 computes it on every version: one ``+`` at a time."""
    total: float = 0  # an int, as sum's start: columns of ints stay ints
    for value in values:
        total += value
    return total
