"""``language_switch``: the output is in another script or language than its references.

The script of a text is the one most of its letters belong to (Unicode character names: LATIN,
CYRILLIC, CJK, HIRAGANA and KATAKANA as Japanese, HANGUL, ARABIC, ...; a CJK character weighs
as much as a three-letter word; a run of kanji that goes on in kana is Japanese). Present when
the output's script is none of its references'. When they share the Latin script, the language
is told by its most frequent function words (English, German, French, Spanish, Italian,
Portuguese, Dutch; elided ones such as French "l'" and "qu'" count too), only for outputs and
references of at least ``MIN_WORDS`` words and only when one language leads clearly: short or
mixed texts are never identified.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import bounded

#: Texts shorter than this many words are not language-identified.
MIN_WORDS = 5
#: The leading language needs this many distinct function words (a word that several
#: languages share counts as its share for each)...
MIN_HITS = 2.0
#: ...and this many times as many as the runner-up (or words of its own where the
#: runner-up has none).
LEAD = 2.0

_NON_ASCII_LETTER = re.compile(r"[^\W\d_a-zA-Z]")
_NON_ASCII_WORD = re.compile(r"[^\W\d_]*[^\W\d_a-zA-Z][^\W\d_]*")
_ASCII_LETTER = re.compile(r"[a-zA-Z]")
_ASCII_WORD = re.compile(r"\b[a-zA-Z]+\b")
_CJK = frozenset({"Han", "Japanese"})
_KANA = re.compile("[\u3040-\u30ff]")
#: A text is in one script when that script holds at least this share of its words.
DOMINANT = 0.6

_SCRIPT_NAMES = {
    "CJK": "Han",
    "HIRAGANA": "Japanese",
    "KATAKANA": "Japanese",
    "LATIN": "Latin",
    "CYRILLIC": "Cyrillic",
    "GREEK": "Greek",
    "HANGUL": "Hangul",
    "ARABIC": "Arabic",
    "HEBREW": "Hebrew",
    "DEVANAGARI": "Devanagari",
    "THAI": "Thai",
}
_script_cache: dict[str, str] = {}


def _char_script(char: str) -> str:
    script = _script_cache.get(char)
    if script is None:
        first = unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]
        if first == "FULLWIDTH" or first == "HALFWIDTH":
            first = "LATIN" if char.isascii() or "LATIN" in unicodedata.name(char, "") else "CJK"
        script = _SCRIPT_NAMES.get(first, first.title())
        if len(_script_cache) < 100_000:
            _script_cache[char] = script
    return script


def script(text: str) -> str | None:
    """The script most of ``text`` is written in (at least ``DOMINANT`` of its words, a CJK
    character counting as a word), or None for a text without letters or of mixed scripts."""
    if text.isascii():
        return "Latin" if _ASCII_LETTER.search(text) else None
    others = _NON_ASCII_WORD.findall(text)
    ascii_words = len(_ASCII_WORD.findall(text))
    if not others:
        return "Latin" if ascii_words else None
    weights: dict[str, int] = {"Latin": ascii_words} if ascii_words else {}
    for word in others:
        name = _char_script(_NON_ASCII_LETTER.search(word).group())  # type: ignore[union-attr]
        if name == "Han" and _KANA.search(word):
            name = "Japanese"  # a run that starts with kanji and goes on in kana
        if name != "Modifier":  # IPA's and spacing marks: no script of their own
            weights[name] = weights.get(name, 0) + (len(word) if name in _CJK else 1)
    if not weights:
        return None
    if "Japanese" in weights and "Han" in weights:
        # Japanese writes with kanji (Han) and kana together.
        weights["Japanese"] += weights.pop("Han")
    best = max(sorted(weights), key=weights.__getitem__)
    if weights[best] < DOMINANT * sum(weights.values()):
        return None
    return best


_FUNCTION_WORDS = {
    "English": "a the and of to in is that with for on as was are have this from by be at or an"
    " which has were it its they their not but would said been he she we you there what about"
    " will had his her more after who one also new than into other some only over can could"
    " when them these our out up all no just do does how should then since ever very where"
    " because while those before between",
    "German": "der die und den das ist nicht mit sich des auf für im dem ein eine einen auch"
    " es zu von wird wurde sind bei nach aus wie oder aber noch über dass hat sie er wir ich"
    " in an als so am vom zum zur werden haben kann nur mehr einer eines diese dieser war"
    " sein seine ihre ihr man uns schon wenn durch unter gegen um hatten hatte wurden dieses"
    " diesem allerdings sowie seit bis vor zwischen sei habe ihm ihn ihnen nun kein keine sehr"
    " immer wieder doch jedoch dort hier heute bereits",
    "French": "le la les des est et une un du dans que qui pour pas sur au avec il elle sont ce"
    " cette mais ou nous vous leur été aux par ont en de se sa son ses plus ne être fait"
    " comme tout aussi deux après entre leurs lui je tu on ils elles où mon ma mes ton ta"
    " tes notre votre nos vos avoir était avait sera ces très sans sous chez donc car dont"
    " quand déjà encore toujours jamais rien peut doit y ici cet depuis avant pendant"
    " à me te moins bien peu également d' l' qu' n' j' c' s' m' jusqu'",
    "Spanish": "el la los las del y que en un una por con para es se su al lo como más pero"
    " sus le ha fue este esta son muy también de no ya cuando sobre entre todo hay han"
    " desde donde porque está era yo tú mi mis tu nos les esto eso ese esa estos estas"
    " ser estar he hemos había sin hasta tras durante después antes nunca siempre aquí"
    " ni e u cada otro otra todos todas toda mismo puede tiene tienen están fueron sido así"
    " a o me te si sí dos uno aunque tan según menos ella él qué",
    "Italian": "il la di che è e un una per non con si del della dei le gli sono ha anche come"
    " più nel alla ma questo in al da lo ci delle degli nella alle essere stato sul tra"
    " l' c' un' dell' all' nell' sull' dall'",
    "Portuguese": "o a os as de que e do da em um uma para com não se por mais dos das no na"
    " como mas foi ao ele ela são também é seu sua pelo pela entre quando muito já à",
    "Dutch": "de het een en van is dat op te niet met zijn voor ook aan er maar om hij zij als"
    " bij nog wordt dit door worden in naar heeft werd hun ze kan uit deze wel tot",
}
_LANGUAGES = tuple(_FUNCTION_WORDS)
_WHICH: dict[str, tuple[int, ...]] = {}
for _index, _language in enumerate(_LANGUAGES):
    for _word in _FUNCTION_WORDS[_language].split():
        _WHICH[_word] = (*_WHICH.get(_word, ()), _index)
        if _word.endswith("'"):  # elided, with either apostrophe
            _WHICH[_word[:-1] + "’"] = _WHICH[_word]
_ALL_FUNCTION_WORDS = frozenset(_WHICH)
_ELIDED = re.compile(r"[^\W\d_]{1,4}['’]")
# Only the start of a long text is read for its language.
_READ = 400


def latin_language(text: str) -> str | None:
    """The language of a Latin-script ``text`` by its function words, or None when it is
    short or no language leads clearly."""
    # Plain words: a function word with punctuation attached ("the,") is not counted; an
    # elided one ("l'", "qu'", "dell'") counts by what precedes its apostrophe.
    head = text[:_READ].lower()
    words = head.split()
    if len(words) < MIN_WORDS:
        return None
    present = _ALL_FUNCTION_WORDS.intersection(words)
    if "'" in head or "’" in head:
        elided = (_ELIDED.match(word) for word in words)
        present |= _ALL_FUNCTION_WORDS.intersection(m.group() for m in elided if m)
    hits = [0.0] * len(_LANGUAGES)
    own = [0] * len(_LANGUAGES)
    for word in present:
        which = _WHICH[word]
        # A word of several languages counts for each, as much as its share.
        for index in which:
            hits[index] += 1.0 / len(which)
        if len(set(which)) == 1:
            own[which[0]] += 1
    ranked = sorted(range(len(hits)), key=hits.__getitem__, reverse=True)
    first, second = hits[ranked[0]], hits[ranked[1]]
    if first < MIN_HITS:
        return None
    # A clear lead: twice the runner-up's count, or words of its own where the runner-up
    # (close, as Romance languages are on their shared words) has none.
    if first < LEAD * second and not (own[ranked[0]] and not own[ranked[1]]):
        return None
    return _LANGUAGES[ranked[0]]


# What the references say is asked again on the blessed side and for every output that shares
# them: remembered, within bounds.
_REMEMBER = 50_000
_reference_scripts: dict[str, str | None] = {}
_reference_languages: dict[str, str | None] = {}


_UNKNOWN = "?"


def _remembered(
    cache: dict[str, str | None], reference: str, find: Callable[[str], str | None]
) -> str | None:
    """``find(reference)``, kept in ``cache`` (cleared when full): references repeat."""
    found = cache.get(reference, _UNKNOWN)
    if found == _UNKNOWN:
        found = find(reference)
        if len(cache) >= _REMEMBER:
            cache.clear()
        cache[reference] = found
    return found


class LanguageSwitch:
    name = "language_switch"
    version = 2
    same_when_unchanged = True

    def __call__(self, example: Example, context: SideContext) -> str | None:
        written = script(example.output)
        if written is None:
            return None
        expected = []
        for reference in example.references:
            found = _remembered(_reference_scripts, reference, script)
            if found == written:
                break
            if found is not None:
                expected.append(found)
        else:
            if expected:
                return bounded(f"{max(sorted(set(expected)), key=expected.count)} → {written}")
            return None
        if written != "Latin" or example.output.count(" ") < MIN_WORDS - 1:
            return None  # (a text of fewer words than MIN_WORDS is not identified)
        language = latin_language(example.output)
        if language is None:
            return None
        languages = []
        for reference in example.references:
            other = _remembered(_reference_languages, reference, latin_language)
            if other == language:
                return None
            if other is not None:
                languages.append(other)
        if not languages:
            return None
        return bounded(f"{min(languages)} → {language}")


LANGUAGE_SWITCH = LanguageSwitch()
