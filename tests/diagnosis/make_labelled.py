"""The labelled rows built from the real outputs of the shared data, in memory.

Used by ``labelled`` (which adds the rows of goldgate's own sentences, ``own_labelled``);
nothing is written into the repository: the shared texts may not be copied into it (see
``../shared/data/README.md``), so the rows are built from them at test or benchmark time, in
a fraction of a second, seeded and deterministic. To read them, dump every available row to a
file of your choosing, outside the repository:

    python -m tests.diagnosis.labelled --out /tmp/labelled.jsonl

Every row is one current output with its input, references and blessed output, from the real
data sets beside the repository (WMT21 German→English and English→Chinese, the same German
sentences as references of an English→German task, SummEval, SQuAD): either unchanged (a
control: blessed = current, or blessed = another real system's output for the same line), or
changed by one realistic regression. ``labels`` are the modes the change puts there (a
detector must find them: recall); ``allowed`` are modes it may bring along by their own
definition (a truncation that halves the output is also a length drift): a detector firing on
a mode in neither counts against its precision. ``suite`` groups rows whose outputs share a
``SideContext`` (one suite is cut at a length cap). The transformations never look at the
detectors: they model what a broken system does.
"""

from __future__ import annotations

import json
import math
import random
import re

from tests.shared_data import DATA

SEED = 32

REFUSALS = {
    "en": [
        "I'm sorry, but I can't help with that request.",
        "I'm sorry, I cannot translate this text.",
        "As an AI language model, I cannot provide a summary of this article.",
        "I apologize, but I am unable to answer this question.",
        "Sorry, but I can't assist with that.",
    ],
    "de": [
        "Es tut mir leid, aber ich kann Ihnen dabei nicht helfen.",
        "Leider kann ich diese Anfrage nicht erfüllen.",
        "Als KI-Sprachmodell kann ich diesen Text nicht übersetzen.",
        "Entschuldigung, ich bin nicht in der Lage, diese Frage zu beantworten.",
    ],
    "zh": [
        "很抱歉，我无法帮助您完成这个请求。",
        "对不起，我不能翻译这段文字。",
        "作为一个人工智能语言模型，我无法提供这方面的信息。",
        "抱歉，我无法回答这个问题。",
    ],
    "fr": [
        "Je suis désolé, mais je ne peux pas vous aider avec cette demande.",
        "En tant qu'IA, je ne peux pas répondre à cette question.",
    ],
    "es": [
        "Lo siento, pero no puedo ayudar con esa solicitud.",
        "Como modelo de lenguaje, no puedo responder a esta pregunta.",
    ],
    "ja": [
        "申し訳ありませんが、そのご質問にはお答えできません。",
        "すみません、お手伝いできません。",
    ],
    "ru": [
        "Извините, но я не могу помочь с этим запросом.",
        "К сожалению, я не могу ответить на этот вопрос.",
    ],
}
_TERMINAL = tuple(".!?。！？…\"'”’")
_NUMBER = re.compile(r"\d+(?:[.,\u00a0\u202f]\d{3})*(?:[.,]\d+)?")


def _load(name: str) -> list[dict[str, object]]:
    with (DATA / name).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _digits(text: str) -> set[str]:
    return {re.sub(r"[.,\u00a0\u202f]", "", n).lstrip("0") or "0" for n in _NUMBER.findall(text)}


def _drifts(output: str, blessed: str, references: list[str]) -> bool:
    """The definition of length_drift (ratio 2, 20 characters), for ``allowed``."""
    now, before = len(output.strip()), len(blessed.strip())
    if not now or not before or abs(now - before) < 20:
        return False
    return abs(math.log(now / before)) >= math.log(2)


def _bare(text: str) -> str:
    return "".join(char for char in text.casefold() if char.isalnum())


def _numbers_moved(row: dict[str, object]) -> bool:
    output, blessed = str(row["output"]), str(row["blessed"])
    references = [str(r) for r in row["references"]]  # type: ignore[attr-defined]
    known = _digits(blessed) | _digits(str(row["source"] or "")).union(*map(_digits, references))
    refs = set().union(*map(_digits, references))
    return bool(_digits(output) - known) or bool((_digits(blessed) & refs) - _digits(output))


class Builder:
    def __init__(self, seed: int = SEED) -> None:
        self.random = random.Random(seed)
        self.rows: list[dict[str, object]] = []

    def add(
        self,
        suite: str,
        lang: str,
        kind: str,
        base: dict[str, object],
        output: str,
        labels: tuple[str, ...] = (),
        allowed: tuple[str, ...] = (),
        blessed: str | None = None,
    ) -> None:
        row: dict[str, object] = {
            "id": f"{suite}-{len(self.rows):04d}",
            "suite": suite,
            "lang": lang,
            "kind": kind,
            "source": base["input"] or None,
            "references": list(base["references"]),  # type: ignore[call-overload]
            "blessed": base["candidate"] if blessed is None else blessed,
            "output": output,
        }
        extra = set(allowed)
        if row["output"] != row["blessed"]:
            if "length_drift" not in labels and _drifts(
                output,
                str(row["blessed"]),
                row["references"],  # type: ignore[arg-type]
            ):
                extra.add("length_drift")
            if "number_change" not in labels and _numbers_moved(row):
                extra.add("number_change")
            if _bare(output) == _bare(str(row["blessed"])):
                extra.add("surface_only")  # by its definition: only case, space, punctuation
        row["labels"] = sorted(labels)
        row["allowed"] = sorted(extra - set(labels))
        self.rows.append(row)

    def pick(self, rows: list[dict[str, object]], count: int) -> list[dict[str, object]]:
        return self.random.sample(rows, count)


def _ends(text: str) -> bool:
    return text.rstrip().endswith(_TERMINAL)


def _cut(builder: Builder, text: str) -> str:
    """A cut where a generation limit falls: at 35-65 % of the text, inside a word or after
    one, never right after a sentence end."""
    low, high = int(len(text) * 0.35), int(len(text) * 0.65)
    for _ in range(20):
        at = builder.random.randint(low, max(low, high))
        piece = text[:at].rstrip()
        if piece and not _ends(piece) and piece[-1] not in ",;:":
            return piece
    return text[:low].rstrip(" .,;:。，")


def _loop(builder: Builder, text: str, chars: bool) -> str:
    """A degenerate loop: the output runs on, repeating a short span until the limit."""
    units = list(text) if chars else text.split()
    size = builder.random.randint(1, 3) if chars else builder.random.randint(2, 5)
    starts = range(len(units) // 4, max(len(units) // 4 + 1, len(units) // 2))
    if chars:  # loops of Chinese characters, not of the Latin names among them
        starts = [
            i for i in starts if all("\u4e00" <= c <= "\u9fff" for c in units[i : i + size])
        ] or starts
    start = builder.random.choice(list(starts))
    span = units[start : start + size]
    times = builder.random.randint(4, 10)
    joined = span * times
    glue = "" if chars else " "
    return glue.join(units[: start + size] + joined[size:])


def _change_number(builder: Builder, text: str) -> str | None:
    found = list(_NUMBER.finditer(text))
    if not found:
        return None
    match = builder.random.choice(found)
    value = match.group()
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    at = builder.random.choice(digits)
    new_digit = str((int(value[at]) + builder.random.randint(1, 8)) % 10)
    changed = value[:at] + new_digit + value[at + 1 :]
    if changed.lstrip("0") == "" or changed == value:
        return None
    return text[: match.start()] + changed + text[match.end() :]


def _drop_number(text: str) -> str | None:
    match = _NUMBER.search(text)
    if match is None:
        return None
    return (text[: match.start()] + text[match.end() :]).replace("  ", " ").strip()


def _surface(builder: Builder, text: str, chars: bool) -> str:
    choice = builder.random.randrange(4)
    if choice == 0 and not chars and text.lower() != text:
        return text.lower()
    if choice == 1:
        return re.sub(r"[,.，。、:;!?\"'“”]", "", text) or text + "."
    if choice == 2 and " " in text:
        return text.replace(" ", "  ", 2) + " "
    if not chars and text.upper() != text:
        return text[0].swapcase() + text[1:] + ("" if _ends(text) else ".")
    return text + "!" if not text.endswith("!") else text[:-1]


def build_shared() -> list[dict[str, object]]:
    """The rows built from the shared data (which must be there: see ``DATA``)."""
    builder = Builder()
    de_en = _load("mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl")
    de_en_other = {r["id"]: r for r in _load("mt_wmt21_newstest2021_de-en.Online-B.jsonl")}
    en_zh = _load("mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl")
    en_zh_other = {r["id"]: r for r in _load("mt_wmt21_newstest2021_en-zh.Online-B.jsonl")}
    # Summaries that end a sentence: some real ones stop mid-word and would be no control.
    summ = [
        r
        for r in _load("summ_summeval_cnndm.jsonl")
        if len(str(r["input"])) < 2500 and _ends(str(r["candidate"]))
    ]
    for row in summ:
        row["references"] = list(row["references"])[:3]  # type: ignore[call-overload]
    squad = _load("qa_squad_v1.1_dev.bert-ensemble.jsonl")
    # English→German: the German sources as references and outputs, the English as input.
    en_de = [
        {
            "id": r["id"],
            "input": r["references"][0],
            "references": [r["input"]],  # type: ignore[index]
            "candidate": r["input"],
        }
        for r in de_en
    ]

    def sentence_refs(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        return [
            r
            for r in rows
            if all(map(_ends, r["references"]))  # type: ignore[arg-type]
            and _ends(str(r["candidate"]))
            and len(str(r["candidate"])) > 60
        ]

    mt = {"en": sentence_refs(de_en), "zh": sentence_refs(en_zh), "de": sentence_refs(en_de)}
    suites = {"en": "mt-de-en", "zh": "mt-en-zh", "de": "mt-en-de"}
    german = [str(r["input"]) for r in de_en if len(str(r["input"])) > 60]
    english = [str(r["candidate"]) for r in de_en if len(str(r["candidate"])) > 60]

    # Controls: unchanged outputs, and another real system's output for the same line.
    for lang, rows in mt.items():
        for base in builder.pick(rows, 25):
            builder.add(suites[lang], lang, "control", base, str(base["candidate"]))
    for base in builder.pick(mt["en"], 15):
        other = de_en_other[base["id"]]
        builder.add(
            "mt-de-en",
            "en",
            "control-other-system",
            base,
            str(base["candidate"]),
            blessed=str(other["candidate"]),
        )
    for base in builder.pick(mt["zh"], 15):
        other = en_zh_other[base["id"]]
        builder.add(
            "mt-en-zh",
            "zh",
            "control-other-system",
            base,
            str(base["candidate"]),
            blessed=str(other["candidate"]),
        )
    for base in builder.pick(summ, 20):
        builder.add("summ", "en", "control", base, str(base["candidate"]))
    for base in builder.pick(squad, 30):
        builder.add("qa", "en", "control", base, str(base["candidate"]))

    for lang, rows in mt.items():
        chars = lang == "zh"
        for base in builder.pick(rows, 8):
            builder.add(
                suites[lang],
                lang,
                "empty",
                base,
                builder.random.choice(["", " ", "\n"]),
                labels=("empty",),
            )
        for base in builder.pick(rows, 12):
            builder.add(
                suites[lang],
                lang,
                "truncated",
                base,
                _cut(builder, str(base["candidate"])),
                labels=("truncated",),
            )
        for base in builder.pick(rows, 10):
            builder.add(
                suites[lang],
                lang,
                "repetition",
                base,
                _loop(builder, str(base["candidate"]), chars),
                labels=("repetition",),
                allowed=("truncated",),
            )
        for base in builder.pick(rows, 8):
            builder.add(
                suites[lang],
                lang,
                "refusal",
                base,
                builder.random.choice(REFUSALS[lang]),
                labels=("refusal",),
            )
        for base in builder.pick(rows, 10):
            if lang == "en":
                swapped = builder.random.choice(german)  # answered in German
            else:
                swapped = builder.random.choice(english)  # answered in English
            builder.add(
                suites[lang], lang, "language_switch", base, swapped, labels=("language_switch",)
            )
        for base in builder.pick(rows, 10):
            # The untranslated input, copied through.
            builder.add(
                suites[lang],
                lang,
                "copied_input",
                base,
                str(base["input"]),
                labels=("copied_input", "language_switch"),
            )
        numbered = [r for r in rows if _NUMBER.search(str(r["candidate"]))]
        for base in builder.pick(numbered, 10):
            changed = _change_number(builder, str(base["candidate"]))
            if changed is not None:
                builder.add(
                    suites[lang], lang, "number_change", base, changed, labels=("number_change",)
                )
        for base in builder.pick(numbered, 5):
            dropped = _drop_number(str(base["candidate"]))
            refs = set().union(*map(_digits, base["references"]))  # type: ignore[arg-type]
            if dropped is not None and _digits(str(base["candidate"])) & refs:
                builder.add(
                    suites[lang], lang, "number_change", base, dropped, labels=("number_change",)
                )
        for base in builder.pick(rows, 10):
            builder.add(
                suites[lang],
                lang,
                "surface_only",
                base,
                _surface(builder, str(base["candidate"]), chars),
                labels=("surface_only",),
            )
        for base in builder.pick(rows, 6):
            # Translates the next line too: a run-on output twice as long or more.
            index = rows.index(base)
            longer = str(base["candidate"])
            while len(longer) < 2.5 * len(str(base["candidate"])):
                index += 1
                longer += " " + str(rows[index % len(rows)]["candidate"])
            builder.add(suites[lang], lang, "length_drift", base, longer, labels=("length_drift",))

    # Refusals in the other languages of the issue, on English tasks.
    for lang in ("fr", "es", "ja", "ru"):
        for base in builder.pick(squad, 4):
            builder.add(
                "qa",
                lang,
                "refusal",
                base,
                builder.random.choice(REFUSALS[lang]),
                labels=("refusal",),
                allowed=("language_switch",),
            )
    # Hard negatives for refusal: the references apologise too.
    for base in builder.pick(mt["en"], 10):
        sentence = str(base["candidate"])
        opening = builder.random.choice(["I'm sorry, ", "Sorry, but ", "I apologize: "])
        reference = opening + sentence[0].lower() + sentence[1:]
        hard = dict(
            base, references=[reference, "I am sorry, " + sentence[0].lower() + sentence[1:]]
        )
        output = opening.replace("I'm", "I am") + sentence[0].lower() + sentence[1:]
        builder.add("mt-de-en", "en", "control-apology", hard, output, blessed=reference)

    # Summaries: truncation, loops, length drift (one sentence left), copies of the article.
    for base in builder.pick(summ, 10):
        builder.add("summ", "en", "empty", base, "", labels=("empty",))
    for base in builder.pick(summ, 10):
        builder.add(
            "summ",
            "en",
            "repetition",
            base,
            _loop(builder, str(base["candidate"]), False),
            labels=("repetition",),
            allowed=("truncated",),
        )
    for base in builder.pick(summ, 10):
        builder.add(
            "summ",
            "en",
            "refusal",
            base,
            builder.random.choice(REFUSALS["en"]),
            labels=("refusal",),
        )
    for base in builder.pick(summ, 8):
        builder.add(
            "summ",
            "en",
            "language_switch",
            base,
            builder.random.choice(german),
            labels=("language_switch",),
        )
    for base in builder.pick(summ, 8):
        first = re.split(r"(?<=[.!?]) ", str(base["candidate"]))[0]
        article = str(base["input"])
        builder.add(
            "summ",
            "en",
            "length_drift",
            base,
            first + " " + article[: len(article) // 2],
            labels=("length_drift",),
            allowed=("copied_input", "truncated"),
        )
    for base in builder.pick(summ, 10):
        builder.add(
            "summ",
            "en",
            "copied_input",
            base,
            str(base["input"]),
            labels=("copied_input",),
            allowed=("length_drift",),
        )
    for base in builder.pick(summ, 8):
        builder.add(
            "summ",
            "en",
            "surface_only",
            base,
            _surface(builder, str(base["candidate"]), False),
            labels=("surface_only",),
        )

    # A length cap: every summary longer than 30 words stops at 30.
    for base in builder.pick(summ, 45):
        words = str(base["candidate"]).split()
        if len(words) > 30:
            builder.add(
                "summ-capped",
                "en",
                "truncated-cap",
                base,
                " ".join(words[:30]),
                labels=("truncated",),
            )
        else:
            builder.add("summ-capped", "en", "control", base, str(base["candidate"]))

    # QA: echoed questions, refusals, numbers.
    for base in builder.pick([r for r in squad if len(str(r["input"]).split()) >= 6], 15):
        builder.add("qa", "en", "copied_input", base, str(base["input"]), labels=("copied_input",))
    for base in builder.pick(squad, 8):
        builder.add("qa", "en", "empty", base, "", labels=("empty",))
    numbered = [r for r in squad if _NUMBER.search(str(r["candidate"]))]
    for base in builder.pick(numbered, 10):
        changed = _change_number(builder, str(base["candidate"]))
        if changed is not None:
            builder.add("qa", "en", "number_change", base, changed, labels=("number_change",))

    # JSON answers: the references and outputs are objects; broken, fenced or re-shaped.
    for index, base in enumerate(builder.pick(squad, 50)):
        refs = [json.dumps({"answer": ref}, ensure_ascii=False) for ref in base["references"]]  # type: ignore[attr-defined]
        structured = dict(base, references=refs)
        answer = json.dumps({"answer": base["candidate"]}, ensure_ascii=False)
        if index < 25:
            builder.add("qa-json", "en", "control-json", structured, answer, blessed=answer)
            continue
        broken = [
            str(base["candidate"]),
            f"```json\n{answer}\n```",
            json.dumps([base["candidate"]], ensure_ascii=False),
            answer[:-2],
            f"Here is the answer: {answer}",
        ][index % 5]
        builder.add(
            "qa-json",
            "en",
            "format_break",
            structured,
            broken,
            blessed=answer,
            labels=("format_break",),
            allowed=("truncated",),
        )
    # Bulleted summaries: the references are lists; the output falls back to prose.
    for index, base in enumerate(builder.pick(summ, 30)):

        def bullets(text: str) -> str:
            return "\n".join("- " + s for s in re.split(r"(?<=[.!?]) ", text.strip()) if s)

        refs = [bullets(str(ref)) for ref in base["references"]]  # type: ignore[attr-defined]
        listed = dict(base, references=refs)
        blessed = bullets(str(base["candidate"]))
        if index < 12:
            builder.add("summ-list", "en", "control-list", listed, blessed, blessed=blessed)
            continue
        builder.add(
            "summ-list",
            "en",
            "format_break",
            listed,
            str(base["candidate"]),
            blessed=blessed,
            labels=("format_break",),
        )
    return builder.rows
