"""Hypothesis strategies for adversarial text, shared by the differential metric tests."""

from __future__ import annotations

from hypothesis import strategies as st

# Pieces chosen to break tokenisers: scripts, combining marks, zero-width and non-breaking
# spaces, punctuation runs, symbols, digits around separators, HTML entities, newlines.
ADVERSARIAL_PIECES = [
    "the",
    "The",
    "THE",
    "cat",
    "cats",
    "running",
    "ran",
    "a",
    "an",
    "of",
    "mat",
    "it's",
    "don't",
    "a-b",
    "2-3",
    "1990.",
    "3.14",
    "1,000",
    "U.S.",
    "e.g.",
    "--",
    "...",
    "!!",
    "?!",
    "(",
    ")",
    "[x]",
    "{y}",
    '"',
    "'",
    "`",
    "&quot;",
    "&amp;",
    "&lt;",
    "&gt;",
    "<skipped>",
    "-\n",
    "€",
    "$5",
    "100%",
    "+",
    "=",
    "@user",
    "#tag",
    "~",
    "^",
    "|",
    "\\",
    "café",
    "naïve",
    "Straße",
    "İstanbul",
    "ǅ",
    "ﬁ",
    "e\u0301",
    "a\u0308",
    "\u0301",
    "\u200b",
    "\u200d",
    "\u00a0",
    "\u2009",
    "\u3000",
    "\t",
    "\n",
    " \n ",
    "\r\n",
    "我喜欢吃苹果。",
    "中文",
    "，",
    "「引号」",
    "日本語",
    "カタカナ",
    "한국어",
    "𠀀",
    "𠮷",
    "Привет",
    "мир",
    "Ελληνικά",
    "العربية",
    "עברית",
    "हिन्दी",
    "ไทย",
    "🙂",
    "👍🏽",
    "⟨⟩",
    "\u2018quoted\u2019",
    "\u201cdq\u201d",
    "\u2013",
    "\u2014",
    "\u2026",
    "→",
    "©",
    "½",
]

piece = st.sampled_from(ADVERSARIAL_PIECES) | st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8
)
word = st.sampled_from(["the", "cat", "sat", "on", "mat", "dog", "a", "big", "red", "runs"])

separator = st.sampled_from([" ", " ", " ", "", "  ", "\n", "\t", "\u00a0"])


@st.composite
def adversarial_text(draw: st.DrawFn, max_pieces: int = 25) -> str:
    """A line mixing common words (so texts overlap) with adversarial pieces."""
    parts = draw(st.lists(word | piece, min_size=0, max_size=max_pieces))
    out = []
    for p in parts:
        out.append(p)
        out.append(draw(separator))
    return "".join(out)


@st.composite
def plain_text(draw: st.DrawFn, max_words: int = 30) -> str:
    """Space-separated common words: high overlap, so n-gram matches are frequent."""
    return " ".join(draw(st.lists(word, min_size=0, max_size=max_words)))


any_text = adversarial_text() | plain_text() | st.just("")


def long_text(n_tokens: int = 2000) -> st.SearchStrategy[str]:
    """A very long line of repeated common words."""
    return st.lists(word, min_size=n_tokens, max_size=n_tokens).map(" ".join)


@st.composite
def example(draw: st.DrawFn, max_refs: int = 4) -> tuple[str, list[str]]:
    """A candidate and 1..max_refs references."""
    candidate = draw(any_text)
    refs = draw(st.lists(any_text, min_size=1, max_size=max_refs))
    return candidate, refs


@st.composite
def corpus(draw: st.DrawFn, max_size: int = 6, max_refs: int = 4) -> list[tuple[str, list[str]]]:
    """Several examples with uneven reference counts."""
    return draw(st.lists(example(max_refs=max_refs), min_size=1, max_size=max_size))


# Short runs of the characters the 13a/zh/intl rules react to (periods and commas next to
# digits, dashes, entities, newlines), where an off-by-one in a regex rewrite would show.
tokenizer_soup = st.text(alphabet=" .,-09aZ!&;<>/\n\t'\"()%$€。，中\u2013\u201c", max_size=40)
