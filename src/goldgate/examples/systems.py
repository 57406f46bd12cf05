"""Three small deterministic systems that the bundled example gates.

They stand in for a real model so that ``goldgate run`` works straight after install: decent
but deliberately imperfect, pure Python, no dependencies. Each takes a golden record's
``input`` as is and returns one string.

- ``summarize``: extractive; the lead sentence plus the sentence that best covers the article.
- ``translate``: German to English with a hand-written phrase table, greedy longest match.
- ``answer``: a keyword-matching reader over a SQuAD-style ``{"question", "context"}`` object.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

__all__ = ["answer", "summarize", "translate"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'A-Z0-9])")
_WORD = re.compile(r"[A-Za-zÀ-ÿ0-9]+(?:[-'’][A-Za-zÀ-ÿ0-9]+)*")

_STOPWORD_TEXT = """
    a about after again all also an and any are as at be been before being but by can could
    did do does during each for from had has have he her here his how i if in into is it its
    just more most my no not now of on once one only or other our out over own same she should
    so some such than that the their them then there these they this those through to too
    under until up very was we were what when where which while who whom why will with would
    you your"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} expects a string input, got {type(value).__name__}")
    return value


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def _stem(word: str) -> str:
    # Crude suffix stripping is enough to match "measures" with "measure" or "trees" with "tree".
    word = word.lower()
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _keywords(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOPWORDS]


# --- summarize ------------------------------------------------------------------------------


def summarize(article: object) -> str:
    """Summarise an article: its lead sentence plus the sentence most typical of the rest."""
    sentences = _sentences(_text(article, "summarize"))
    if len(sentences) <= 2:
        return "\n".join(sentences)
    frequency = Counter(_keywords(" ".join(sentences)))
    lead_words = set(_keywords(sentences[0]))

    def weight(index: int) -> float:
        words = set(_keywords(sentences[index]))
        if not words:
            return 0.0
        # Words the lead already covers count for less, so the pick adds something new.
        total = sum(frequency[w] * (0.5 if w in lead_words else 1.0) for w in words)
        return total / math.sqrt(len(words))

    best = max(range(1, len(sentences)), key=lambda i: (weight(i), -i))
    return sentences[0] + "\n" + sentences[best]


# --- translate ------------------------------------------------------------------------------

# "German phrase = English" entries separated by "|" or newlines. German is matched in lower
# case, English is written as is. Multi-word phrases cover idioms and fixed word orders; single
# words are the fallback; unknown words (names) pass through; an empty English side drops the
# word (a separable prefix such as "ab").
_PHRASE_TABLE = """
    wie viel = how much | um acht uhr = at eight o'clock | um zehn uhr = at ten o'clock
    ich möchte = I would like to | ich hätte gern = I would like | am see = on the lake
    jeden morgen = every morning | jeden tag = every day | in der stadt = in the city
    im garten = in the garden | ins kino = to the cinema | am samstag = on Saturday
    noch nicht = not yet | beim bäcker = at the bakery | zum frühstück = for breakfast
    schmeckt nach = tastes of | die rechnung = the bill | es ist = it is | im sommer = in summer
    letzte woche = last week | im nächsten jahr = next year | sucht nach = is looking for
    nach dem = after the | bis freitag = by Friday | fertig machen = finish
    am wochenende = at the weekend | ins krankenhaus = to hospital | neben der = next to the
    der post = the post office | eine stunde = an hour | spazieren gehen = go for a walk
    e-mail = email | gern = like to | die polizei = the police | stark gestiegen = risen sharply
    viele menschen = many people
    der = the | die = the | das = the | den = the | dem = the | des = of the | ein = a
    eine = a | einer = a | einen = a | einem = a | und = and | oder = or | aber = but
    nicht = not | kein = no | keine = no | ich = I | du = you | er = he | sie = she | es = it
    wir = we | ihr = you | mir = me | mich = me | uns = us | ihnen = you | mein = my
    meine = my | meinen = my | unser = our | unsere = our | seinen = his | sein = his
    seine = his | ist = is | sind = are | war = was | waren = were | wurde = was | hat = has
    haben = have | habe = have | wird = will | kann = can | kannst = can | können = can
    muss = must | müssen = must | musste = had to | soll = should | will = wants to
    fährt = leaves | ab = | liegt = is | kostet = costs | zeigen = show | gelassen = left
    trinke = drink | trinken = drink | wohnt = lives | spielen = are playing | gehen = go
    geht = goes | verloren = lost | geben = give | arbeitet = works | arbeite = work
    gelesen = read | schläft = is sleeping | kaufen = buy | esse = eat | schmeckt = tastes
    regnen = rain | scheint = is shining | senken = cut | eröffnet = opened | sucht = is looking
    protestiert = protested | besucht = visited | gestiegen = risen | gesperrt = closed
    gewonnen = won | speichern = save | schließen = close | finden = find | gefunden = found
    veröffentlicht = released | funktioniert = works | schicken = send | beginnt = starts
    sagt = says | spazieren = walk | machen = make | zug = train | nach = to | uhr = o'clock
    wo = where | bahnhof = station | zimmer = room | für = for | zwei = two | drei = three
    eins = one | acht = eight | zehn = ten | nächte = nights | reservieren = book
    hotel = hotel | direkt = right | see = lake | fahrkarte = ticket | flug = flight
    stunden = hours | verspätung = delay | bitte = please | weg = way | zum = to the
    zur = to the | museum = museum | koffer = suitcases | im = in the | am = on the | in = in
    an = at | auf = on | mit = with | unter = under | neben = next to | gegen = against
    bei = at | von = of | bevor = before | als = as | zu = too | sehr = very | viel = a lot
    viele = many | heute = today | gestern = yesterday | morgen = tomorrow | jeden = every
    tasse = cup | kaffee = coffee | schwester = sister | bruder = brother | kleinen = small
    wohnung = flat | stadt = city | zeit = time | kinder = children | garten = garden
    kino = cinema | samstag = Saturday | schlüssel = key | salz = salt | lehrer = teacher
    schule = school | buch = book | noch = still | hund = dog | tisch = table | essen = food
    diesem = this | dieser = this | restaurant = restaurant | gut = good | gute = good
    geschneit = snowed | seit = for | glas = glass | wasser = water | frisches = fresh
    brot = bread | bäcker = baker | suppe = soup | heiß = hot | frühstück = breakfast
    äpfel = apples | joghurt = yoghurt | kuchen = cake | zitrone = lemon | rechnung = bill
    sommer = summer | hier = here | warm = warm | wind = wind | stark = strong | kalt = cold
    letzte = last | woche = week | sonne = sun | himmel = sky | blau = blue
    regierung = government | steuern = taxes | nächsten = next | jahr = year | neue = new
    neuen = new | brücke = bridge | polizei = police | fahrer = driver | autos = car
    menschen = people | plan = plan | bürgermeister = mayor | preise = prices
    strom = electricity | sturm = storm | straßen = roads | mannschaft = team | spiel = game
    computer = computer | langsam = slow | datei = file | programm = program | telefon = phone
    kamera = camera | passwort = password | firma = company | version = version
    software = software | drucker = printer | besprechung = meeting | jahren = years
    chef = boss | krank = ill | bericht = report | freitag = Friday | stelle = job
    büro = office | wochenende = weekend | geschlossen = closed | kopfschmerzen = headache
    fieber = fever | arzt = doctor | apotheke = pharmacy | post = post | stunde = hour
    tag = day | unfall = accident | krankenhaus = hospital | wie = how | ins = into the
    münchen = Munich | wien = Vienna
"""


def _parse_table(text: str) -> dict[str, str]:
    table: dict[str, str] = {}
    for entry in re.split(r"[|\n]", text):
        german, sep, english = entry.partition("=")
        if sep:
            table[" ".join(german.split())] = " ".join(english.split())
    return table


_PHRASES = _parse_table(_PHRASE_TABLE)
_MAX_PHRASE = max(len(key.split()) for key in _PHRASES)
_DE_TOKEN = re.compile(r"\w+(?:-\w+)*|[^\w\s]")
_NO_SPACE_BEFORE = frozenset(".,!?;:")


def translate(sentence: object) -> str:
    """Translate a German sentence into English with a greedy longest-phrase lookup."""
    tokens = _DE_TOKEN.findall(_text(sentence, "translate"))
    words: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] == "Sie" and i > 0:
            # Capitalised "Sie" after the first word is the polite "you", not "she".
            words.append("you")
            i += 1
            continue
        for size in range(min(_MAX_PHRASE, len(tokens) - i), 0, -1):
            key = " ".join(tokens[i : i + size]).lower()
            if key in _PHRASES:
                if _PHRASES[key]:
                    words.extend(_PHRASES[key].split())
                i += size
                break
        else:
            words.append(tokens[i])
            i += 1
    return _detokenize(words)


def _detokenize(words: Sequence[str]) -> str:
    out = ""
    for word in words:
        out += word if not out or word in _NO_SPACE_BEFORE else " " + word
    return out[:1].upper() + out[1:]


# --- answer ---------------------------------------------------------------------------------

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(
    rf"\b(?:\d{{1,2}} (?:{_MONTHS}) \d{{4}}|(?:{_MONTHS}) \d{{4}}|(?:1[0-9]|20)\d\d|"
    rf"(?:every |each )?(?:{_MONTHS}|spring|summer|autumn|winter))\b"
)
_NUMBER_WORDS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
_NUMBER = re.compile(rf"\b(?:\d+(?:[.,]\d+)*(?: million)?|{_NUMBER_WORDS})\b")
_UNIT_TEXT = """
    metres metre kilometres kilometre miles mile feet degrees pounds euros dollars tonnes
    kilograms hours minutes days weeks years percent"""
_UNITS = frozenset(_UNIT_TEXT.split())
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:and\s+)?[A-Z][\w'’-]*)*")
_NOT_NAMES = frozenset(
    {"Dr", "Professor", "Lord", "Sir", "Mr", "Mrs", "Ms", "Today", "Its", "Her", "His"}
    | set(_MONTHS.split("|"))
)
_COPULAS = frozenset({"is", "was", "are", "were", "be", "been"})


def _question_type(question: str) -> str:
    q = question.lower()
    if q.startswith("how many"):
        return "count"
    if q.startswith(("how much", "how long", "how tall", "how high", "how far")):
        return "measure"
    for word in ("when", "who", "where", "which"):
        if q.startswith(word):
            return word
    return "what"


def _ranked_sentences(question: str, context: str) -> list[str]:
    wanted = set(_keywords(question))
    sentences = _sentences(context) or [context]
    # Most shared keywords first; earlier sentences win ties, as openings carry the main facts.
    order = sorted(
        range(len(sentences)), key=lambda i: (-len(wanted & set(_keywords(sentences[i]))), i)
    )
    return [sentences[i] for i in order]


def _keyword_positions(sentence: str, question: str) -> list[int]:
    wanted = set(_keywords(question))
    return [m.start() for m in _WORD.finditer(sentence) if _stem(m.group(0)) in wanted]


def _closest(spans: list[tuple[int, str]], anchors: list[int]) -> str:
    # The span nearest a question keyword is likeliest the one asked about.
    if not anchors:
        return spans[0][1]
    return min(spans, key=lambda span: min(abs(span[0] - a) for a in anchors))[1]


def _spans(kind: str, sentence: str, question: str) -> list[tuple[int, str]]:
    asked = question.lower()
    asked_words = set(_WORD.findall(asked))
    spans: list[tuple[int, str]] = []
    if kind == "when":
        spans = [(m.start(), m.group(0)) for m in _DATE.finditer(sentence)]
    elif kind in ("count", "measure"):
        counted = _stem(asked.split()[2]) if len(asked.split()) > 2 else ""
        for m in _NUMBER.finditer(sentence):
            after = _NEXT_WORD.match(sentence, m.end())
            unit = after.group(1) if after else ""
            if kind == "measure" and unit.lower() in _UNITS:
                spans.append((m.start(), f"{m.group(0)} {unit}"))
            elif kind == "count" and (not counted or _stem(unit) == counted):
                spans.append((m.start(), m.group(0)))
    elif kind in ("who", "where", "which"):
        for m in _CAPITALISED.finditer(sentence):
            words = m.group(0).split()
            # A capitalised sentence opener ("The", "In") or a title is not part of a name.
            while words and (words[0].lower() in _STOPWORDS or words[0] in _NOT_NAMES):
                words = words[1:]
            if words and not all(w.lower() in asked_words or w == "and" for w in words):
                spans.append((m.start(), " ".join(words)))
    return [(start, text) for start, text in spans if text.lower() not in asked]


def _after_last_keyword(sentence: str, question: str) -> str:
    wanted = set(_keywords(question))
    asked = set(_WORD.findall(question.lower()))
    words = sentence.rstrip(".!?").split()
    last = -1
    for index, word in enumerate(words):
        if _stem(word.strip(",;")) in wanted:
            last = index
    tail = words[last + 1 :]
    while tail and (tail[0].lower() in _COPULAS or tail[0].lower() in asked):
        tail = tail[1:]
    span: list[str] = []
    for word in tail:
        if word.lower() in {"and", "which", "that", "who"} and span:
            break
        span.append(word.strip(",;"))
        if word.endswith((",", ";")):
            break
    return " ".join(span)


def answer(item: object) -> str:
    """Answer ``{"question", "context"}`` with a span from the best-matching context sentence."""
    if not isinstance(item, Mapping) or not isinstance(item.get("question"), str):
        raise TypeError("answer expects an object with 'question' and 'context' strings")
    question: str = item["question"]
    context = _text(item.get("context"), "answer (context)")
    ranked = _ranked_sentences(question, context)
    kind = _question_type(question)
    if kind != "what":
        # Read down the ranking until a sentence holds a span of the expected kind.
        for sentence in ranked:
            spans = _spans(kind, sentence, question)
            if spans:
                return _closest(spans, _keyword_positions(sentence, question))
    return _after_last_keyword(ranked[0], question) or ranked[0]
