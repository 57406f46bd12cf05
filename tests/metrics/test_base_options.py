"""MetricOptions: a frozen dataclass validated from command-line strings or YAML values."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import FrozenInstanceError
from typing import Any, Literal

import pytest

from goldgate.errors import MetricError
from goldgate.metrics.base import MetricOptions, OptionError, option
from goldgate.metrics.registry import builtin_metric_names, create_metric


class _Options(MetricOptions):
    """Every kind of option a metric declares."""

    flag: bool = False
    count: int = option(default=4, ge=1, le=10)
    ratio: float = 1.0
    loose: float = option(default=0.0, allow_inf_nan=True)
    name: str = "x"
    mode: Literal["fast", "slow"] = "fast"
    maybe: float | None = option(default=None, ge=0)
    steps: str | tuple[str, ...] = "a"


def parse(**values: Any) -> _Options:
    return _Options.parse(values)


def reason(**values: Any) -> tuple[str, str]:
    with pytest.raises(OptionError) as info:
        _Options.parse(values)
    return info.value.key, info.value.reason


def test_defaults_and_declaration_order() -> None:
    assert parse() == _Options()
    assert _Options.option_names() == [
        "flag",
        "count",
        "ratio",
        "loose",
        "name",
        "mode",
        "maybe",
        "steps",
    ]


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        *[(text, True) for text in ("true", "True", "TRUE", "yes", "y", "on", "1", "t")],
        *[(text, False) for text in ("false", "FALSE", "no", "n", "off", "0", "f")],
        (True, True),
        (False, False),
        (1, True),
        (0, False),
        (1.0, True),
    ],
)
def test_bool_accepts_pydantic_lax_spellings(raw: Any, value: bool) -> None:
    assert parse(flag=raw).flag is value


@pytest.mark.parametrize("raw", ["maybe", "", " true", 2, -1, 0.5, None, [True]])
def test_bool_rejects_anything_else(raw: Any) -> None:
    assert reason(flag=raw) == ("flag", f"expected true or false, got {raw!r}")


@pytest.mark.parametrize(
    ("raw", "value"), [("3", 3), (" 3 ", 3), ("+3", 3), ("3.0", 3), (3.0, 3), (7, 7)]
)
def test_int_from_strings_and_integral_floats(raw: Any, value: int) -> None:
    result = parse(count=raw).count
    assert result == value and type(result) is int


@pytest.mark.parametrize("raw", [True, False, "3.5", 2.5, "four", "", None, math.nan, math.inf])
def test_int_rejects_bools_fractions_and_words(raw: Any) -> None:
    assert reason(count=raw) == ("count", f"expected an integer, got {raw!r}")


def test_int_bounds() -> None:
    assert parse(count="1").count == 1 and parse(count=10).count == 10
    assert reason(count="0") == ("count", "must be at least 1, got 0")
    assert reason(count=11) == ("count", "must be at most 10, got 11")


@pytest.mark.parametrize(("raw", "value"), [("0.1", 0.1), ("1e-3", 1e-3), (2, 2.0), (0.5, 0.5)])
def test_float_from_strings_and_numbers(raw: Any, value: float) -> None:
    result = parse(ratio=raw).ratio
    assert result == value and type(result) is float


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", math.nan, math.inf])
def test_float_rejects_nan_and_inf_unless_the_option_allows_them(raw: Any) -> None:
    key, message = reason(ratio=raw)
    assert key == "ratio" and message.startswith("expected a finite number, got ")
    assert not math.isfinite(parse(loose=raw).loose)


@pytest.mark.parametrize("raw", [True, "abc", "", None, [1.0]])
def test_float_rejects_bools_and_words(raw: Any) -> None:
    assert reason(ratio=raw) == ("ratio", f"expected a number, got {raw!r}")


def test_optional_float() -> None:
    assert parse(maybe=None).maybe is None
    assert parse(maybe="0.25").maybe == 0.25
    # As under pydantic, a string spelling of null is not null.
    assert reason(maybe="none") == ("maybe", "expected a number or null, got 'none'")
    assert reason(maybe=-1) == ("maybe", "must be at least 0, got -1.0")


def test_str_and_literal() -> None:
    assert parse(name="y").name == "y"
    assert reason(name=3) == ("name", "expected a string, got 3")
    assert parse(mode="slow").mode == "slow"
    assert reason(mode="Slow") == (
        "mode",
        "expected one of 'fast', 'slow', got 'Slow' (did you mean 'slow'?)",
    )


def test_lists_become_tuples_so_options_stay_hashable() -> None:
    options = parse(steps=["a", "b"])
    assert options.steps == ("a", "b")
    assert hash(options) == hash(parse(steps=("a", "b")))
    assert parse(steps="a+b").steps == "a+b"
    key, message = reason(steps=[1])
    assert key == "steps" and message.startswith("expected a string or a list")


def test_unknown_keys_are_rejected() -> None:
    key, message = reason(flga=True)
    assert key == "flga" and message.startswith("unknown option; valid options: flag, count")


def test_options_are_frozen_hashable_and_compared_by_value() -> None:
    options = parse(flag="yes", count="3")
    with pytest.raises(FrozenInstanceError):
        options.flag = False  # type: ignore[misc]
    assert options == parse(flag=True, count=3) != parse()
    assert len({options, parse(flag=True, count=3)}) == 1


def test_a_required_option_must_be_given() -> None:
    class _Required(MetricOptions):
        size: int

    assert _Required.parse({"size": "2"}).size == 2
    with pytest.raises(OptionError, match="a value is required"):
        _Required.parse({})


def test_cross_option_checks_name_the_option() -> None:
    with pytest.raises(MetricError, match="option 'smooth_value' of metric 'bleu': smooth_method"):
        create_metric("bleu", {"smooth_value": "0.1"})
    with pytest.raises(MetricError, match="option 'word_order' of metric 'chrf': char_order and"):
        create_metric("chrf", {"char_order": "0"})


def test_json_schema() -> None:
    schema = _Options.json_schema()
    assert schema["additionalProperties"] is False
    assert schema["description"] == "Every kind of option a metric declares."
    properties = schema["properties"]
    assert properties["flag"] == {"title": "Flag", "type": "boolean", "default": False}
    assert properties["count"] == {
        "title": "Count",
        "type": "integer",
        "default": 4,
        "minimum": 1,
        "maximum": 10,
    }
    assert properties["mode"]["enum"] == ["fast", "slow"]
    assert properties["maybe"]["anyOf"] == [{"type": "number"}, {"type": "null"}]
    assert properties["steps"]["anyOf"][1] == {"type": "array", "items": {"type": "string"}}


def test_every_builtin_metric_builds_without_importing_pydantic() -> None:
    # pydantic's import alone costs ~20 MB and ~100 ms, a large part of `goldgate score`.
    code = (
        "import sys, goldgate.cli.commands.score, goldgate.metrics.registry as r\n"
        "need = {'embedding_similarity': {'model': 'm'}, 'llm_judge': {'model': 'm',"
        " 'base_url': 'http://127.0.0.1:1/v1', 'rubric': 'r'}}\n"
        "[r.create_metric(n, need.get(n)) for n in r.builtin_metric_names()]\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert len(builtin_metric_names()) > 10
