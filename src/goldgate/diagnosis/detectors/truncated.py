"""``truncated``: the output stops before it is finished.

Present when the output leaves a code fence or a bracket open that no reference leaves open
(or a double quote, mid-sentence, where the input and references pair theirs); when it stops
at a token count at which many outputs of the same side pile up (a length cap, from
``SideContext.length_caps``); when it is the blessed output cut short (its start, where the
blessed output went on to end a sentence); or, where every reference ends a sentence and the
output does not, when it stops mid-word (its last word starts a longer word of the references,
source or blessed output), after a comma or a word that cannot end a sentence ("the", "and",
"der", "et", ...), or far shorter than the shortest reference.
"""

from __future__ import annotations

import re

from goldgate.diagnosis.detector import Example, SideContext
from goldgate.diagnosis.detectors._text import WORD, bounded, ends_sentence, quote

_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("（", "）"), ("【", "】"), ("「", "」"), ("«", "»"))
_OPENER = re.compile("[" + re.escape("".join(opener for opener, _ in _PAIRS) + '"') + "]")

# Words after which no sentence ends, in the languages goldgate's users write most.
_DANGLING_WORDS = """a the and or of with from by than whose my your their our
    der das dem des ein eine einen einem einer und oder
    le la les un une des du de et ou el los las una y o del il gli di della per"""
_DANGLING = frozenset(_DANGLING_WORDS.split())
_DANGLING_MARKS = frozenset(",;:-–—、，：；(")

#: Shorter than this share of the shortest reference (in characters) counts as stopped early.
SHORT_SHARE = 0.6
#: A mid-word stop leaves at least this many characters of the completed word unwritten.
MIDWORD_MISSING = 3


def _open_bracket(text: str) -> str | None:
    for opener, closer in _PAIRS:
        if opener in text and text.count(opener) > text.count(closer):
            return opener
    return None


def _odd_quotes(text: str) -> bool:
    """Whether ``text`` leaves a straight or curly double quote unpaired."""
    return text.count('"') % 2 == 1 or text.count("“") != text.count("”")


def _opens(text: str, at: int) -> bool:
    """Whether the quote at ``at`` opens a quotation: after a space or the start, before a
    letter or digit."""
    before = text[at - 1] if at else " "
    after = text[at + 1 : at + 2]
    return (before.isspace() or before in "([") and after.isalnum()


def _cut_from(output: str, blessed: str | None) -> bool:
    """Whether ``output`` is the blessed output cut short: its start, with words missing
    after it, where the blessed output ends a sentence."""
    if not blessed or not blessed.startswith(output) or not ends_sentence(blessed):
        return False
    return sum(char.isalnum() for char in blessed[len(output) :]) >= MIDWORD_MISSING


def _completes(word: str, texts: tuple[str, ...]) -> str | None:
    """A longer word of ``texts`` that ``word`` starts, when ``word`` itself is not one."""
    lowered = word.lower()
    longer = None
    for text in texts:
        for candidate in WORD.findall(text.lower()):
            if candidate == lowered:
                return None
            if (
                longer is None
                and len(candidate) >= len(lowered) + MIDWORD_MISSING
                and candidate.startswith(lowered)
            ):
                longer = candidate
    return longer


class Truncated:
    name = "truncated"
    version = 1
    same_when_unchanged = True
    reads_context = True
    # whether it fires reads only the caps (the evidence also quotes a count)
    presence_reads = ("length_caps",)

    def __call__(self, example: Example, context: SideContext) -> str | None:
        output = example.output.rstrip()
        if not output:
            return None
        references = example.references
        if (
            "```" in output
            and output.count("```") % 2 == 1
            and not any(reference.count("```") % 2 == 1 for reference in references)
        ):
            return "code fence left open"
        if _OPENER.search(output):
            opener = _open_bracket(output)
            if opener is not None and not any(map(_open_bracket, references)):
                return bounded(f"{quote(opener)} left open")
            # A quote may open in one segment and close in the next: only when the input and
            # every reference pair theirs.
            if (
                output.count('"') % 2 == 1
                and not ends_sentence(output)
                and _opens(output, output.rindex('"'))
                and references
                and not any(map(_odd_quotes, references))
                and not _odd_quotes(example.source or "")
            ):
                return bounded(f"{quote(chr(34))} left open")
        if context.length_caps:
            size = len(output.split())
            if size in context.length_caps:
                count = context.token_counts.get(size, 0)
                return bounded(f"stops at {size} tokens, like {count} outputs (a length cap)")
        if ends_sentence(output):
            return None
        tokens = output.split()
        if _cut_from(output, example.blessed):
            return bounded(f"stops where the blessed output went on, at {quote(tokens[-1])}")
        if not references or not all(ends_sentence(reference) for reference in references):
            return None
        last = tokens[-1]
        shortest = min(len(reference.strip()) for reference in references)
        if last[-1] in _DANGLING_MARKS:
            return bounded(f"stops mid-sentence at {quote(last)}")
        if len(tokens) > 1 and last.lower() in _DANGLING:
            return bounded(f"stops mid-sentence after {quote(last)}")
        if len(output) < 0.9 * shortest and last.isalpha() and len(last) >= 2:
            # The blessed output helps only where it differs: an unchanged output answers on
            # the current side as on the blessed one.
            others = (example.source, None if example.blessed == output else example.blessed)
            texts = references + tuple(text for text in others if text)
            if _completes(last, texts) is not None:
                return bounded(f"stops mid-word at {quote(last)}")
        if len(output) < SHORT_SHARE * shortest:
            return bounded(f"stops mid-sentence at {quote(' '.join(tokens[-3:]))}")
        return None


TRUNCATED = Truncated()
