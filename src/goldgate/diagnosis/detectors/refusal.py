"""``refusal``: refusal or apology boilerplate that no reference has.

Two families of patterns, in English, German, French, Spanish, Chinese, Japanese and Russian:
phrases that only an assistant declining writes ("As an AI", "I can't help with that", "Als
KI-Sprachmodell", "作为一个人工智能", ...) anywhere in the output, and apologies and refusals
that are ordinary words elsewhere ("I'm sorry", "Lo siento", "К сожалению", "抱歉", ...) only
at its start. Not present when a reference matches too: a reference that apologises makes an
apology right.
"""

from __future__ import annotations

import re

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import bounded, quote

# Where an apology or refusal must start to count: after quotes, spaces, "Well,", "Oh," ...
_LEAD = (
    r"^[\s\"'“„«「『*#>-]*"
    r"(?:(?:well|oh|ah|hmm|unfortunately|leider|hélas|lamentablemente)[,!.]?\s*)?"
)
_APOSTROPHE = "['’]"

_START = re.compile(
    _LEAD + r"(?:"
    # English
    rf"(?:i{_APOSTROPHE}m|i am|we{_APOSTROPHE}re|we are) (?:so |very |truly |really )?sorry\b"
    r"|sorry[,!.]? (?:but |i |we )"
    r"|(?:my )?apologies\b|i (?:do )?apologi[sz]e\b"
    rf"|i (?:can{_APOSTROPHE}?t|cannot|can not|won{_APOSTROPHE}t|will not|am unable to|"
    rf"{_APOSTROPHE}m unable to|am not able to|{_APOSTROPHE}m not able to)"
    r" (?:help|assist|provide|answer|do that|fulfil|comply|complete|create|generate|write"
    r"|translate|summari[sz]e|respond)"
    r"|unfortunately,? i (?:can|am|could|'m|’m)"
    # German
    r"|es tut mir (?:sehr |wirklich )?leid\b|entschuldigung\b|ich entschuldige mich\b"
    r"|(?:leider )?(?:kann|darf) ich (?:ihnen |dir )?(?:[\w-]+ ){0,3}?(?:nicht|keine)\b"
    r"|ich bin (?:leider )?nicht in der lage\b"
    # French
    r"|je suis (?:vraiment |sincèrement )?(?:désolée?|navrée?)\b|désolée?[,!.]?\s"
    r"|je ne (?:peux|suis) pas (?:vous )?(?:aider|répondre|fournir|en mesure)"
    r"|(?:malheureusement,? )?je ne peux pas\b|je regrette,? mais\b"
    # Spanish
    r"|lo (?:siento|lamento)\b"
    r"|(?:lamentablemente,? )?no puedo (?:ayudar|proporcionar|responder|hacer|cumplir"
    r"|traducir|resumir|generar|escribir|realizar)"
    r"|no estoy en (?:condiciones|disposición) de\b"
    r"|(?:perdón|perdone|perdona|disculpa|disculpas|discúlpame|disculpe|discúlpeme),? pero\b"
    # Russian
    r"|(?:извините|простите|прошу прощения)\b|к сожалению,? (?:я|мы) не\b"
    r"|мне (?:очень )?жаль,? но\b|я не в состоянии\b"
    r"|я не могу (?:помочь|выполнить|ответить|предоставить|перевести|сделать|написать)"
    # Chinese
    r"|(?:很|非常|十分)?(?:抱歉|对不起|不好意思)"
    r"|(?:我|我们)(?:无法|不能|没办法)(?:帮|回答|提供|完成|满足|协助|翻译|总结)"
    # Japanese
    r"|(?:大変)?申し訳(?:ありません|ございません|ない)|すみません|ごめんなさい"
    r"|(?:お手伝い|お答え|回答|対応)(?:することは)?できません"
    r"|(?:残念ながら|恐れ入りますが|恐縮ですが)[、,]?[^。！？]{0,40}?(?:できません|いたしかねます)"
    r"|ご期待に(?:沿え|添え)(?:ず|なくて)"
    r")",
)

_ANYWHERE = re.compile(
    r"(?:"
    rf"\bas an? (?:ai|a\.i\.|artificial intelligence)(?: language model| assistant| model)?\b"
    r"|\bas a (?:large )?language model\b|\bi(?:'m| am) (?:just )?an ai\b"
    rf"|\bi (?:can{_APOSTROPHE}t|cannot|won{_APOSTROPHE}t) (?:help|assist)"
    r" (?:you )?with (?:that|this)\b"
    r"|\bi(?:'m| am) not able to (?:help|assist) with\b"
    r"|\bals (?:eine? )?(?:ki|künstliche intelligenz)(?:-sprachmodell| sprachmodell)?\b"
    r"|\bals (?:ein )?sprachmodell\b"
    r"|\ben tant qu['’](?:ia|intelligence artificielle|assistant)\b"
    r"|\ben tant que modèle de langage\b"
    r"|\bcomo (?:una? )?(?:ia|inteligencia artificial|modelo de lenguaje)\b"
    r"|\bкак (?:ии|искусственный интеллект|языковая модель)\b"
    r"|作为(?:一个|一名)?(?:ai|人工智能|语言模型|ai语言模型|ai助手)"
    r"|(?:ai|人工知能|言語モデル)(?:アシスタント)?として"
    r")",
)

# Characters after which a refusal no longer counts as the output's opening.
_HEAD = 200
# Every phrase of _ANYWHERE holds one of these: a text without any is not searched.
_KEYS = (
    " ai",
    "a.i.",
    "artificial intelligence",
    "language model",
    "help",
    "assist",
    " ki",
    "künstliche",
    "sprachmodell",
    "en tant qu",
    " ia",
    "inteligencia",
    "modelo de lenguaje",
    "ии",
    "интеллект",
    "модель",
    "作为",
    "として",
)
_KEY = re.compile("|".join(map(re.escape, _KEYS)))
# What _LEAD skips (whitespace as ``\s`` knows it, quotes and marks), and the characters a
# refusal may start with after it (the first letters of _START's branches and _LEAD's words):
# a text starting otherwise is not matched against _START.
_LEAD_CHARS = "".join(chr(code) for code in range(0x3001) if chr(code).isspace()) + "\"'“„«「『*#>-"
_FIRST = frozenset("iwsmauohlekdjnpипкмя很非十抱对不我大申すごお回対残恐")
# Characters read for the phrases that count anywhere.
_READ = 1000


def _refusal(text: str) -> str | None:
    head = text[:_READ].lower()  # the patterns are lowercase: faster than IGNORECASE
    first = head.lstrip(_LEAD_CHARS)[:1]
    found = _START.match(head, 0, _HEAD) if first and first in _FIRST else None
    if found is None and _KEY.search(head):
        found = _ANYWHERE.search(head)
    if found is None:
        return None
    start, end = found.span()
    # The original's case, unless lowercasing changed lengths (as it does for "İ").
    said = text[start:end] if len(head) == min(len(text), _READ) else found.group(0)
    return said.strip(" \t\n\"'“„«「『*#>-")


class Refusal:
    name = "refusal"
    version = 2
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        phrase = _refusal(example.output)
        if not phrase:
            return None
        if any(_refusal(reference) for reference in example.references):
            return None
        return bounded(quote(phrase, 40))


REFUSAL = Refusal()
