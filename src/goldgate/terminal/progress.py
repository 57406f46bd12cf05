"""Progress of long work: a bar on a terminal, a few plain lines in CI logs, or nothing."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Protocol, TextIO

from goldgate.terminal import console

BAR_WIDTH = 28
REDRAW_EVERY_S = 0.1
PLAIN_EVERY_S = 30.0


class ProgressReporter(Protocol):
    """What the library calls while it works; the faces decide how it looks."""

    def start(self, total: int, label: str) -> None:
        """Begin a task of ``total`` steps."""

    def advance(self, n: int = 1) -> None:
        """``n`` more steps are done."""

    def finish(self) -> None:
        """The task ended (done or failed)."""


class NullProgress:
    """Reports nothing."""

    def start(self, total: int, label: str) -> None:
        """Begin a task of ``total`` steps."""

    def advance(self, n: int = 1) -> None:
        """``n`` more steps are done."""

    def finish(self) -> None:
        """The task ended."""


class _Counter:
    def __init__(self, stream: TextIO, clock: Callable[[], float]) -> None:
        self.stream = stream
        self.clock = clock
        self.total = 0
        self.done = 0
        self.label = ""
        self.started = 0.0
        self.active = False

    def _begin(self, total: int, label: str) -> None:
        # A label may name a suite or a file: shown through the output layer, on one line.
        self.total, self.done, self.label = max(total, 0), 0, console.inline(label)
        self.started = self.clock()
        self.active = True

    def _rate_text(self) -> str:
        elapsed = self.clock() - self.started
        if self.done <= 0 or elapsed <= 0:
            return ""
        rate = self.done / elapsed
        remaining = (self.total - self.done) / rate if rate > 0 else 0.0
        return f" {rate:.1f}/s eta {_duration(remaining)}"


class BarProgress(_Counter):
    """A one-line bar redrawn in place (for a terminal)."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(stream, clock)
        self._drawn_at = 0.0

    def start(self, total: int, label: str) -> None:
        """Begin a task of ``total`` steps."""
        self._begin(total, label)
        self._draw(force=True)

    def advance(self, n: int = 1) -> None:
        """``n`` more steps are done."""
        self.done = min(self.done + n, self.total) if self.total else self.done + n
        self._draw(force=self.done >= self.total)

    def finish(self) -> None:
        """The task ended: leave the last state on its own line."""
        if not self.active:
            return
        self._draw(force=True, rate=False)
        self.stream.write("\n")
        self.stream.flush()
        self.active = False

    def _draw(self, *, force: bool, rate: bool = True) -> None:
        now = self.clock()
        if not force and now - self._drawn_at < REDRAW_EVERY_S:
            return
        self._drawn_at = now
        fraction = self.done / self.total if self.total else 1.0
        filled = int(fraction * BAR_WIDTH)
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        extra = self._rate_text() if rate and self.done < self.total else ""
        text = f"\r{self.label} [{bar}] {self.done}/{self.total}{extra}"
        self.stream.write(text + "\x1b[K")
        self.stream.flush()


class PlainProgress(_Counter):
    """Plain lines: one at the start, one at the end, one every 30 s in between (for CI)."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        every_s: float = PLAIN_EVERY_S,
    ) -> None:
        super().__init__(stream, clock)
        self.every_s = every_s
        self._said_at = 0.0

    def start(self, total: int, label: str) -> None:
        """Begin a task of ``total`` steps."""
        self._begin(total, label)
        self._said_at = self.started
        self._say(f"{label}: 0/{total}")

    def advance(self, n: int = 1) -> None:
        """``n`` more steps are done."""
        self.done += n
        if self.clock() - self._said_at >= self.every_s and self.done < self.total:
            self._say(f"{self.label}: {self.done}/{self.total}{self._rate_text()}")

    def finish(self) -> None:
        """The task ended."""
        if not self.active:
            return
        elapsed = self.clock() - self.started
        self._say(f"{self.label}: {self.done}/{self.total} in {_duration(elapsed)}")
        self.active = False

    def _say(self, line: str) -> None:
        self._said_at = self.clock()
        self.stream.write(console.clean(line) + "\n")
        self.stream.flush()


def make_progress(
    stream: TextIO | None, *, env: Mapping[str, str] | None = None
) -> ProgressReporter:
    """A bar on a terminal; plain lines off a terminal or under ``CI``; nothing without a stream."""
    if stream is None:
        return NullProgress()
    environ = os.environ if env is None else env
    in_ci = environ.get("CI", "").lower() not in ("", "0", "false", "no")
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    if is_tty and not in_ci and environ.get("TERM") != "dumb":
        return BarProgress(stream)
    return PlainProgress(stream)


def _duration(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
