"""What a judge's next call will cost, estimated before it is made (for ``budget``).

Prices are the judge's own options (``price_input_per_mtok``, ``price_output_per_mtok``, US
dollars per million tokens). A call's prompt tokens are estimated from the length of its
messages at the tokens per character the judge reported for the judgments already seen —
cached ones, from earlier runs, then this run's as they come back — and its completion tokens
as the most a seen judgment used. Before any is seen the estimate is cautious: a token per 3
characters of prompt, and ``max_tokens`` of completion (the most the judge may reply).
"""

from __future__ import annotations

import math
import threading
from typing import Any

from goldgate.metrics.semantic.judge_http import Judgment

#: characters per prompt token assumed before any judgment was seen (English is near 4)
CAUTIOUS_CHARS_PER_TOKEN = 3.0


def prompt_chars(body: dict[str, Any]) -> int:
    """Characters of a chat request's messages."""
    messages = body.get("messages", [])
    return sum(len(str(message.get("content", ""))) for message in messages)


class CallCosts:
    """Prices and what the judgments seen so far used, for estimating the next call."""

    def __init__(self, price_input: float, price_output: float, max_tokens: int) -> None:
        self.price_input = price_input
        self.price_output = price_output
        self.max_tokens = max_tokens
        self._chars = 0
        self._prompt_tokens = 0
        self._most_completion: int | None = None
        self._lock = threading.Lock()

    def cost(self, judgment: Judgment) -> float:
        """What a judgment cost, in US dollars."""
        return (
            judgment.prompt_tokens * self.price_input
            + judgment.completion_tokens * self.price_output
        ) / 1_000_000

    def observe(self, body: dict[str, Any], judgment: Judgment) -> None:
        """Learn from a judgment (cached or just made) what a request of this size uses."""
        with self._lock:
            self._chars += prompt_chars(body)
            self._prompt_tokens += judgment.prompt_tokens
            most = self._most_completion or 0
            self._most_completion = max(most, judgment.completion_tokens)

    def estimate(self, body: dict[str, Any]) -> float:
        """The estimated cost of sending ``body``, in US dollars."""
        chars = prompt_chars(body)
        with self._lock:
            if self._chars and self._prompt_tokens:
                prompt = math.ceil(chars * self._prompt_tokens / self._chars)
            else:
                prompt = math.ceil(chars / CAUTIOUS_CHARS_PER_TOKEN)
            completion = (
                self._most_completion if self._most_completion is not None else self.max_tokens
            )
        return (prompt * self.price_input + completion * self.price_output) / 1_000_000
