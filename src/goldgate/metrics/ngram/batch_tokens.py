"""Tokenise every text of a chunk in one pass over one string.

Tokenising 2,000 short answers one by one costs a Python call, a few regex calls and a
lowercasing per text, which is most of a chunk's time on short QA records. The tokenizers
below only ever look at a character's immediate neighbours, so tokenising the texts joined
by a separator gives each text's tokens, in order, with the separator as a token of its own
between two texts, provided that

- the separator occurs in no text (checked: otherwise the caller tokenises text by text);
- no rule matches the separator or across it: it is a control character (``\\x00``) that no
  rule's character class names, padded with spaces where a rule looks at neighbours;
- lowercasing the joined string lowercases each text alike: ``str.lower`` is per character
  except for the Greek final sigma, whose context stops at a character that is neither
  cased nor case-ignorable, which ``\\x00`` is not.

The tests hold each joined tokenizer to its text-by-text twin on adversarial text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from goldgate.metrics.ngram.packed_ngrams import TOKEN_IDS

Ints = NDArray[np.int64]

#: Between two texts of a joined string; texts containing it are tokenised one by one.
SEPARATOR = "\x00"


def joined(texts: Sequence[str], padding: str = "") -> str | None:
    """The texts joined by the separator (padded with ``padding`` on both sides), or None
    when a text contains the separator itself."""
    glue = f"{padding}{SEPARATOR}{padding}"
    whole = glue.join(texts)
    if whole.count(SEPARATOR) != max(len(texts) - 1, 0):
        return None
    return whole


def split_items(tokens: list[str], texts: int) -> tuple[Ints, Ints] | None:
    """Token ids (``TOKEN_IDS``) of ``texts`` texts from the tokens of their joined string, as
    CSR (items, offsets); None if the separators are not where they should be."""
    ids = np.fromiter(map(TOKEN_IDS.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    is_separator = ids == TOKEN_IDS[SEPARATOR]
    bounds = np.flatnonzero(is_separator)
    if len(bounds) != max(texts - 1, 0):
        return None
    edges = np.concatenate(([-1], bounds, [len(ids)]))
    offsets = np.zeros(texts + 1, dtype=np.int64)
    np.cumsum(np.diff(edges) - 1, out=offsets[1:])
    return ids[~is_separator], offsets


def token_items(
    texts: Sequence[str],
    tokenize_joined: Callable[[str], list[str]],
    tokenize_each: Callable[[str], list[str]],
    padding: str = "",
) -> tuple[Ints, Ints]:
    """CSR token ids of ``texts``: ``tokenize_joined`` over the joined texts when it applies,
    else ``tokenize_each`` text by text (the two give the same tokens)."""
    from goldgate.metrics.ngram import batch_ngrams

    whole = joined(texts, padding) if texts else None
    if whole is not None:
        found = split_items(tokenize_joined(whole), len(texts))
        if found is not None:
            return found
    return batch_ngrams.token_items([tokenize_each(text) for text in texts])
