"""Each built-in detector on cases of its own, and properties of all of them: deterministic,
never raising on any text, evidence short and free of control characters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldgate.diagnosis.detect import detect_side, detect_sides, length_caps, side_context
from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import EVIDENCE_MAX
from goldgate.diagnosis.detectors.length_drift import LengthDrift
from goldgate.diagnosis.registry import builtin_detector_names, detectors

NONE = SideContext()


def _said(
    name: str,
    output: str,
    *refs: str,
    source: str | None = None,
    blessed: str | None = None,
    context: SideContext = NONE,
) -> str | None:
    (detector,) = [d for d in detectors() if d.name == name]
    return detector(Example(output, source, tuple(refs), blessed), context)


def test_builtins_in_the_issue_order() -> None:
    assert builtin_detector_names() == [
        "empty",
        "truncated",
        "repetition",
        "refusal",
        "language_switch",
        "format_break",
        "number_change",
        "copied_input",
        "length_drift",
        "surface_only",
    ]
    assert all(isinstance(d.version, int) for d in detectors())


@pytest.mark.parametrize(
    ("name", "output", "refs", "expected"),
    [
        (
            "truncated",
            "The club management annou",
            ("The club management announced its plans.",),
            "mid-word",
        ),
        ("truncated", "```python\nprint(1)", ("```python\nprint(1)\n```",), "code fence"),
        ("repetition", "the cat the cat the cat sat", ("A cat sat.",), "'the cat' ×3"),
        ("refusal", "Извините, я не могу помочь.", ("Ответ.",), "Извините"),
        ("refusal", "申し訳ありませんが、できません。", ("答え。",), "申し訳ありません"),
        (
            "language_switch",
            "В пятницу вечером произошла авария.",
            ("An accident happened.",),
            "Latin → Cyrillic",
        ),
        ("format_break", "Paris", ('{"city": "Paris"}',), "plain text"),
    ],
)
def test_each_detector_finds_its_mode(
    name: str, output: str, refs: tuple[str, ...], expected: str
) -> None:
    said = _said(name, output, *refs)
    assert said is not None and expected in said


def test_modes_that_need_the_blessed_output() -> None:
    assert (
        _said(
            "number_change", "It cost 12 euros.", "It cost 10 euros.", blessed="It cost 10 euros."
        )
        == "new numbers: 12"
    )
    assert _said("number_change", "It cost 12 euros.", "It cost 10 euros.") is None
    assert _said("surface_only", "hello, world", "x", blessed="Hello world") == (
        "only case, punctuation changed"
    )
    assert _said("length_drift", "word " * 40, "a b c d", blessed="a b c d") is not None
    assert _said("length_drift", "word " * 40, "a b c d") is None
    # Numbers of the input support the output; words support their digits.
    assert _said("number_change", "2 cars", "two cars", source="Zwei Autos", blessed="cars") is None


def test_refusals_in_french_spanish_russian_japanese() -> None:
    """Openings of declining answers beyond "sorry" (version 2), and ordinary sentences that
    share their words without declining."""
    for said in (
        "Je regrette, mais je ne peux pas donner suite à votre demande.",
        "Disculpe, pero no puedo responder a esa petición.",
        "No puedo traducir este contenido.",
        "Мне жаль, но я не могу ответить на этот запрос.",
        "Я не могу перевести это сообщение.",
        "残念ながら、お手伝いすることはできません。",
        "恐れ入りますが、このリクエストには対応できません。",
        "ご期待に沿えず申し訳ありません。",
        "AIアシスタントとして、この内容を翻訳することはできません。",
    ):
        assert _said("refusal", said, "Une réponse.") is not None, said
    for plain in (
        "Je regrette d'avoir vendu cette maison.",
        "No puedo creer que ya sea viernes.",
        "Мне жаль этих людей.",
        "恐れ入りますが、少々お待ちください。",
        "残念ながら、試合は雨で中止になった。",
    ):
        assert _said("refusal", plain, "Une réponse.") is None, plain


def test_language_of_japanese_runs_and_french_elisions() -> None:
    """A run that starts with kanji and goes on in kana is Japanese, not Chinese; elided
    French articles count as its function words (version 2)."""
    japanese = "科学者たちがエクアドルの熱帯雨林でカエルの新種を発見した。"
    assert _said("language_switch", "残念ながらできません。", japanese) is None
    assert _said("language_switch", "科学家在厄瓜多尔发现了新物种。", japanese) == (
        "Japanese → Han"
    )
    french = "Le prix d'un litre de lait a augmenté de 15 % en un an."
    english = "The price of a litre of milk has risen by 15 percent in one year."
    assert _said("language_switch", english, french) == "French → English"
    spanish = "El restaurante de la esquina sirve la mejor sopa que he comido nunca."
    assert _said("language_switch", spanish, french) == "French → Spanish"


def test_hard_negatives() -> None:
    assert _said("refusal", "I'm sorry for the delay.", "I am sorry for the delay.") is None
    assert _said("refusal", "The minister said he was sorry.", "He apologised.") is None
    assert _said("repetition", "No, no, no, no!", "No, no, no, no!") is None
    assert _said("format_break", '{"a": 2}', '{"a": 1}') is None
    assert _said("copied_input", "What is it?", "What is it?", source="What is it?") is None


def test_length_drift_threshold_is_configurable() -> None:
    example = Example("x" * 60, None, ("y" * 40,), "x" * 40)
    assert LengthDrift()(example, NONE) is None
    assert LengthDrift(ratio=1.4, min_chars=10)(example, NONE) is not None
    with pytest.raises(ValueError, match="ratio"):
        LengthDrift(ratio=1.0)


def test_a_length_cap_is_seen_across_outputs() -> None:
    outputs = [" ".join(["w"] * n) + "." for n in range(5, 40)] + ["w " * 30] * 20
    context = side_context(outputs)
    assert context.length_caps == frozenset({30}) == length_caps(context.token_counts, len(outputs))
    said = _said("truncated", "w " * 30, "A whole sentence.", context=context)
    assert said is not None and "length cap" in said


def test_detect_side_is_per_example_in_detector_order() -> None:
    examples = [Example("", None, ("a.",)), Example("fine.", None, ("fine.",))]
    findings = detect_side(examples, detectors())
    assert findings.names == [("empty",), ()]
    assert findings.evidence[0] == {"empty": "empty output"}


TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300
) | st.sampled_from(["", "\u0301\u0301", "\u202e abc", "ـــ", "{", "```", "1,000.5 ١٢٣"])


@settings(max_examples=150, deadline=None)
@given(
    output=TEXT, source=st.none() | TEXT, refs=st.lists(TEXT, max_size=3), blessed=st.none() | TEXT
)
def test_never_raises_deterministic_bounded(
    output: str, source: str | None, refs: list[str], blessed: str | None
) -> None:
    example = Example(output, source, tuple(refs), blessed)
    context = side_context([output, blessed or ""])
    for detector in detectors():
        first = detector(example, context)
        assert first == detector(example, context)
        if first is not None:
            assert 0 < len(first) <= EVIDENCE_MAX
            assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in first)


def test_huge_inputs_stay_cheap() -> None:
    huge = "word " * 200_000
    example = Example(huge + "again " * 50, huge, (huge,), huge)
    for detector in detectors():
        said = detector(example, NONE)
        assert said is None or len(said) <= EVIDENCE_MAX


def _sides(
    rows: list[tuple[str, str | None, tuple[str, ...], str]],
) -> tuple[list[Example], list[Example]]:
    current = [Example(out, src, refs, before) for out, src, refs, before in rows]
    blessed = [Example(before, src, refs, None) for _, src, refs, before in rows]
    return current, blessed


def test_detect_sides_answers_as_detect_side_on_the_labelled_set() -> None:
    from tests.diagnosis.labelled import load

    rows = load()
    current, blessed = _sides(
        [(str(r["output"]), r["source"], tuple(r["references"]), str(r["blessed"])) for r in rows]  # type: ignore[misc, arg-type]
    )
    now, before = detect_sides(current, blessed, detectors())
    assert (now, before) == (detect_side(current, detectors()), detect_side(blessed, detectors()))
    # The reuse was exercised (71 unchanged outputs in the own sentences alone).
    assert sum(1 for e in current if e.output == e.blessed) > 60


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            TEXT, st.none() | TEXT, st.lists(TEXT, max_size=2).map(tuple), TEXT, st.booleans()
        ),
        max_size=8,
    )
)
def test_detect_sides_answers_as_detect_side(
    drawn: list[tuple[str, str | None, tuple[str, ...], str, bool]],
) -> None:
    rows = [(before if same else out, src, refs, before) for out, src, refs, before, same in drawn]
    current, blessed = _sides(rows)
    chosen = detectors()
    assert detect_sides(current, blessed, chosen) == (
        detect_side(current, chosen),
        detect_side(blessed, chosen),
    )
