"""What every kind of system shares while goldgate obtains its outputs.

A :class:`Call` is one output to obtain (a record, a sample, its cache key) and ``Deliver``
hands an output back to be cached; the predictions file, the command and the callable check
the texts they get the same way (:func:`lone_surrogate`) and word ids and values in their
errors the same way. The command's and the callable's runners share the daemon threads they
wait on and the grace they give a process or event loop that does not stop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from goldgate.errors import first_of
from goldgate.model.golden_records import GoldenRecord
from goldgate.systems.cache import CacheKey

SHOWN_IDS = 10
KILL_GRACE_S = 1.0
#: How often the wait for a command's next line looks at whether it has exited.
POLL_S = 0.1


@dataclass(frozen=True)
class Call:
    """One output to obtain: a record and a sample index."""

    record: GoldenRecord
    sample: int
    key: CacheKey


Deliver = Callable[[Call, str], None]


def lone_surrogate(text: str) -> str | None:
    """The first lone surrogate in ``text``, escaped (``\\ud800``); None for real text.

    JSON escapes and Python strings can hold one, UTF-8 cannot: the cache, the baseline and
    the reports could not write it.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return text[exc.start].encode("unicode_escape").decode("ascii")
    return None


def _daemon(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _text_id(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return str(value)


def _ids(ids: Sequence[str]) -> str:
    return first_of([repr(i) for i in ids], SHOWN_IDS)


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__
