"""Finding metrics: built-in names, specs, module:function paths and entry points."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from goldgate.errors import MetricError
from goldgate.metrics.base import Metric, MetricOptions, Stats
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import (
    FunctionMetric,
    builtin_metric_names,
    create_metric,
    metric_from_spec,
    metric_names,
    parse_metric_spec,
)


@pytest.mark.parametrize(
    ("spec", "name", "options"),
    [
        ("bleu", "bleu", {}),
        (
            "bleu:tokenize=intl,smooth_method=floor",
            "bleu",
            {"tokenize": "intl", "smooth_method": "floor"},
        ),
        ("rougeLsum:use_stemmer=true", "rougeLsum", {"use_stemmer": "true"}),
        ("chrf++", "chrf++", {}),
        ("pkg.mod:func", "pkg.mod:func", {}),
        ("pkg.mod:func:k=1, j = 2", "pkg.mod:func", {"k": "1", "j": "2"}),
        ("mod:func", "mod:func", {}),
        # values holding colons: a URL with a port, a Windows path
        (
            "llm_judge:base_url=http://127.0.0.1:8000/v1,model=m:7b",
            "llm_judge",
            {"base_url": "http://127.0.0.1:8000/v1", "model": "m:7b"},
        ),
        ("pkg.mod:func:path=C:\\m", "pkg.mod:func", {"path": "C:\\m"}),
    ],
)
def test_parse_metric_spec(spec: str, name: str, options: dict[str, str]) -> None:
    assert parse_metric_spec(spec) == (name, options)


@pytest.mark.parametrize("spec", ["bleu:tokenize", ":a=1", "bleu:=x"])
def test_bad_specs_are_metric_errors(spec: str) -> None:
    with pytest.raises(MetricError, match="bad metric spec"):
        parse_metric_spec(spec)


# Metrics that need a model or an endpoint: no defaults, by design (tested in their modules).
NEED_SETTINGS = {"embedding_similarity", "llm_judge"}


def test_every_builtin_builds_with_defaults_and_has_a_signature() -> None:
    for name in builtin_metric_names():
        if name in NEED_SETTINGS:
            with pytest.raises(MetricError, match=f"bad options for metric {name!r}"):
                create_metric(name)
            continue
        metric = create_metric(name)
        assert metric.name == name
        assert str(metric.signature([1])).endswith("|version:0.1.0")


def test_unknown_metric_suggests_the_nearest_name() -> None:
    with pytest.raises(
        MetricError, match=r"unknown metric 'rougeLsun' \(did you mean 'rougeLsum'\?\)"
    ):
        create_metric("rougeLsun")


def test_unknown_option_suggests_the_nearest_and_lists_valid_ones() -> None:
    with pytest.raises(MetricError) as exc:
        metric_from_spec("bleu:tokenise=intl", where="cli: ")
    message = str(exc.value)
    assert message.startswith("cli: unknown option 'tokenise' for metric 'bleu'")
    assert "(did you mean 'tokenize'?)" in message
    assert "valid options:" in message and "smooth_method" in message


def test_bad_option_value_names_the_option() -> None:
    with pytest.raises(MetricError, match=r"bad value for option 'tokenize' of metric 'bleu'"):
        create_metric("bleu", {"tokenize": "klingon"})


def test_string_options_from_the_command_line_are_coerced() -> None:
    metric = metric_from_spec("bleu:lowercase=true,max_ngram_order=2")
    assert metric.options.lowercase is True
    assert metric.options.max_ngram_order == 2


def _first_word_match(candidate: str, references: list[str]) -> float:
    return 100.0 if any(candidate.split()[:1] == r.split()[:1] for r in references) else 0.0


class _CountingOptions(MetricOptions):
    weight: float = 1.0


class CountingMetric(Metric[_CountingOptions]):
    """A user's Metric subclass: weighted candidate length."""

    name: ClassVar[str] = "counting"
    Options: ClassVar[type[MetricOptions]] = _CountingOptions
    stat_names = ("tokens", "count")

    def example_stats(self, candidate: Any, references: Sequence[Any]) -> Stats:
        return (self.options.weight * len(candidate.split()), 1.0)

    def score_stats(self, stats: Sequence[float]) -> float:
        return stats[0] / stats[1] if stats[1] else 0.0

    def signature_fields(self) -> list[tuple[str, str]]:
        return [("weight", str(self.options.weight))]


def test_module_function_is_averaged_per_example() -> None:
    metric = create_metric(f"{__name__}:_first_word_match")
    assert isinstance(metric, FunctionMetric)
    (result,) = score_corpus(
        [("custom", metric)], ["a b", "x y", "a"], [["a c"], ["z"], ["b", "a"]]
    )
    assert result.per_example() == [100.0, 0.0, 100.0]
    assert result.corpus_score().score == pytest.approx(200 / 3)
    assert "custom:" in str(result.signature)


def test_module_metric_subclass_takes_options() -> None:
    metric = metric_from_spec(f"{__name__}:CountingMetric:weight=2")
    (result,) = score_corpus([("c", metric)], ["a b c", "d"], [["x"], ["y"]])
    assert result.corpus_score().score == pytest.approx(4.0)
    assert "weight:2.0" in str(result.signature)
    with pytest.raises(MetricError, match=r"unknown option 'wieght'.*did you mean 'weight'"):
        metric_from_spec(f"{__name__}:CountingMetric:wieght=2")


def test_function_metric_returning_a_non_number_is_an_error() -> None:
    metric = create_metric(f"{__name__}:_returns_text")
    with pytest.raises(MetricError, match="returned 'high', not a number"):
        score_corpus([("t", metric)], ["a"], [["a"]])


def _returns_text(candidate: str, references: list[str]) -> str:
    return "high"


def test_missing_module_or_attribute_is_an_error() -> None:
    with pytest.raises(MetricError, match="cannot import module 'no_such_module_xyz'"):
        create_metric("no_such_module_xyz:f")
    with pytest.raises(MetricError, match="has no 'nothing_here'"):
        create_metric(f"{__name__}:nothing_here")


@pytest.fixture
def installed_plugin(tmp_path: Path) -> Iterator[None]:
    """A distribution on sys.path that declares a metric in the goldgate.metrics group."""
    (tmp_path / "gg_plugin_mod.py").write_text(
        "def shout(candidate, references):\n    return 100.0 if candidate.isupper() else 0.0\n",
        encoding="utf-8",
    )
    dist = tmp_path / "gg_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: gg-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(
            """
            [goldgate.metrics]
            shout = gg_plugin_mod:shout
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("gg_plugin_mod", None)


@pytest.mark.usefixtures("installed_plugin")
def test_entry_point_metrics_are_found_by_name() -> None:
    assert "shout" in metric_names()
    metric = create_metric("shout")
    (result,) = score_corpus([("shout", metric)], ["HEY", "hey"], [["x"], ["x"]])
    assert result.per_example() == [100.0, 0.0]


def _word_error(candidate: str, references: list[str]) -> float:
    return 0.0 if candidate in references else 100.0


_word_error.higher_is_better = False  # type: ignore[attr-defined]


def test_a_function_metric_declares_its_direction_by_an_attribute() -> None:
    assert create_metric(f"{__name__}:_first_word_match").higher_is_better is True
    assert create_metric(f"{__name__}:_word_error").higher_is_better is False
    assert create_metric("bleu").higher_is_better is True
