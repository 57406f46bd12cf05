"""The labelled rows built from goldgate's own sentences: English→French, Spanish, Russian and
Japanese translation, without the shared data.

The same transformations as ``make_labelled`` (cut, loop, refusal, answer in another language,
untranslated input, changed or dropped number, case and punctuation edits, run-on output,
broken JSON, a length cap) run over ``own_sentences``: the input is the English sentence, the
reference its translation and the blessed output that translation too (a system that was
right), so every row's regression is the one the transformation made. Seeded: the same rows on
every run.
"""

from __future__ import annotations

import json

from tests.diagnosis.make_labelled import (
    _NUMBER,
    Builder,
    _change_number,
    _cut,
    _digits,
    _drop_number,
    _loop,
    _surface,
)
from tests.diagnosis.own_sentences import APOLOGISING, LANGUAGES, REFUSALS, SENTENCES

SEED = 3206

#: Rows of each kind, per language (a row may reuse a sentence another kind used).
COUNTS = {
    "control": 12,
    "empty": 4,
    "truncated": 6,
    "repetition": 5,
    "refusal": 6,
    "language_switch": 6,
    "copied_input": 5,
    "number_change": 6,
    "number_dropped": 3,
    "surface_only": 5,
    "length_drift": 4,
}
#: Of the JSON-answer suite, per language: this many controls, then as many broken answers.
JSON_ROWS = 5
#: The length cap of the capped suite, in words (Japanese, written without spaces, has none).
CAP_WORDS = 9


def _task(index: int, lang: str) -> dict[str, object]:
    """One translation task: its English input, its reference and the blessed output."""
    sentence = SENTENCES[index]
    return {
        "index": index,
        "input": sentence["en"],
        "references": [sentence[lang]],
        "candidate": sentence[lang],
    }


def _apology(index: int) -> tuple[str, ...]:
    """What an output made of sentence ``index`` may bring along: an apologising sentence put
    where the references do not apologise is refusal boilerplate by the mode's definition,
    though no regression put it there on purpose."""
    return ("refusal",) if index in APOLOGISING else ()


def build_own() -> list[dict[str, object]]:
    builder = Builder(SEED)
    indices = list(range(len(SENTENCES)))
    plain = [i for i in indices if i not in APOLOGISING]
    for lang in LANGUAGES:
        suite = f"own-en-{lang}"
        chars = lang == "ja"
        tasks = [_task(i, lang) for i in indices]
        declinable = [tasks[i] for i in plain]
        numbered = [t for t in tasks if _NUMBER.search(str(t["candidate"]))]

        def add(
            kind: str,
            base: dict[str, object],
            output: str,
            labels: tuple[str, ...] = (),
            allowed: tuple[str, ...] = (),
            suite: str = suite,
            blessed: str | None = None,
            lang: str = lang,
        ) -> None:
            builder.add(suite, lang, kind, base, output, labels, allowed, blessed)

        # Controls: unchanged outputs, the apologising sentences among them.
        controls = builder.pick(plain, COUNTS["control"] - len(APOLOGISING))
        for index in sorted(APOLOGISING) + controls:
            add("control", tasks[index], str(tasks[index]["candidate"]))
        for base in builder.pick(tasks, COUNTS["empty"]):
            add("empty", base, builder.random.choice(["", " ", "\n"]), labels=("empty",))
        for base in builder.pick(tasks, COUNTS["truncated"]):
            cut = _cut(builder, str(base["candidate"]))
            add("truncated", base, cut, labels=("truncated",))
        for base in builder.pick(tasks, COUNTS["repetition"]):
            looped = _loop(builder, str(base["candidate"]), chars)
            add("repetition", base, looped, labels=("repetition",), allowed=("truncated",))
        for base in builder.pick(declinable, COUNTS["refusal"]):
            refusal = builder.random.choice(REFUSALS[lang])
            add("refusal", base, refusal, labels=("refusal",))
        for base in builder.pick(tasks, COUNTS["language_switch"]):
            index = int(base["index"])  # type: ignore[call-overload]
            if builder.random.random() < 0.5:
                # Answered in English: another sentence's English, not the input's.
                index = builder.random.choice([i for i in indices if i != index])
                swapped = SENTENCES[index]["en"]
            else:  # translated into another of the languages
                other = builder.random.choice([x for x in LANGUAGES if x != lang])
                swapped = SENTENCES[index][other]
            add("language_switch", base, swapped, ("language_switch",), _apology(index))
        for base in builder.pick(tasks, COUNTS["copied_input"]):
            # The untranslated input, copied through.
            copied = str(base["input"])
            index = int(base["index"])  # type: ignore[call-overload]
            add("copied_input", base, copied, ("copied_input", "language_switch"), _apology(index))
        for base in builder.pick(numbered, COUNTS["number_change"]):
            changed = _change_number(builder, str(base["candidate"]))
            if changed is not None:
                add("number_change", base, changed, labels=("number_change",))
        for base in builder.pick(numbered, COUNTS["number_dropped"]):
            dropped = _drop_number(str(base["candidate"]))
            refs = set().union(*map(_digits, base["references"]))  # type: ignore[call-overload]
            if dropped is not None and _digits(str(base["candidate"])) & refs:
                add("number_change", base, dropped, labels=("number_change",))
        for base in builder.pick(tasks, COUNTS["surface_only"]):
            edited = _surface(builder, str(base["candidate"]), chars)
            add("surface_only", base, edited, labels=("surface_only",))
        for base in builder.pick(tasks, COUNTS["length_drift"]):
            # Translates the next sentences too: a run-on output at least 2.5 times as long.
            index = int(base["index"])  # type: ignore[call-overload]
            first = str(base["candidate"])
            longer = first
            while len(longer) < 2.5 * len(first):
                index += 1
                longer += ("" if chars else " ") + SENTENCES[index % len(SENTENCES)][lang]
            add("length_drift", base, longer, labels=("length_drift",))

        # JSON answers: {"translation": ...}; broken, fenced, re-shaped or unwrapped.
        for number, base in enumerate(builder.pick(tasks, 2 * JSON_ROWS)):
            reference = json.dumps({"translation": base["candidate"]}, ensure_ascii=False)
            structured = dict(base, references=[reference])
            if number < JSON_ROWS:
                json_suite = f"own-json-{lang}"
                add("control-json", structured, reference, suite=json_suite, blessed=reference)
                continue
            broken = [
                str(base["candidate"]),
                f"```json\n{reference}\n```",
                json.dumps([base["candidate"]], ensure_ascii=False),
                reference[:-2],
                f"Translation: {reference}",
            ][number % 5]
            add(
                "format_break",
                structured,
                broken,
                labels=("format_break",),
                allowed=("truncated",),
                suite=f"own-json-{lang}",
                blessed=reference,
            )

        # A length cap: in a suite of their own, outputs of more than CAP_WORDS words stop
        # there (a generation limit); the shorter ones are controls.
        if not chars:
            for base in builder.pick(tasks, 16):
                words = str(base["candidate"]).split()
                capped = f"own-capped-{lang}"
                if len(words) > CAP_WORDS:
                    cut = " ".join(words[:CAP_WORDS])
                    add("truncated-cap", base, cut, labels=("truncated",), suite=capped)
                else:
                    # An output of exactly the cap's length may have been cut there: no one
                    # can tell, so a detector may say either.
                    at_cap = ("truncated",) if len(words) == CAP_WORDS else ()
                    add("control", base, str(base["candidate"]), allowed=at_cap, suite=capped)
    return builder.rows
