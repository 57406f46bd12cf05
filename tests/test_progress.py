"""Progress: a bar on a terminal, a few plain lines in CI, nothing without a stream."""

from __future__ import annotations

import io

from goldgate.terminal.progress import BarProgress, NullProgress, PlainProgress, make_progress


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_make_progress_picks_by_terminal_and_ci() -> None:
    assert isinstance(make_progress(FakeTTY(), env={}), BarProgress)
    assert isinstance(make_progress(FakeTTY(), env={"CI": "true"}), PlainProgress)
    assert isinstance(make_progress(FakeTTY(), env={"CI": "false"}), BarProgress)
    assert isinstance(make_progress(FakeTTY(), env={"TERM": "dumb"}), PlainProgress)
    assert isinstance(make_progress(io.StringIO(), env={}), PlainProgress)
    assert isinstance(make_progress(None), NullProgress)


def test_bar_redraws_in_place_and_ends_with_a_newline() -> None:
    stream, clock = FakeTTY(), Clock()
    bar = BarProgress(stream, clock)
    bar.start(4, "qa")
    for _ in range(4):
        clock.now += 1
        bar.advance()
    bar.finish()
    text = stream.getvalue()
    assert text.startswith("\rqa [" + "-" * 28 + "] 0/4")
    assert "] 2/4 " in text and "eta" in text
    assert text.endswith("] 4/4\x1b[K\n")
    assert text.count("\n") == 1


def test_bar_throttles_redraws() -> None:
    stream, clock = FakeTTY(), Clock()
    bar = BarProgress(stream, clock)
    bar.start(1000, "qa")
    for _ in range(999):
        bar.advance()  # no time passes: nothing redrawn until the end
    assert stream.getvalue().count("\r") == 1
    bar.advance()
    assert stream.getvalue().count("\r") == 2


def test_plain_progress_is_quiet() -> None:
    stream, clock = io.StringIO(), Clock()
    plain = PlainProgress(stream, clock, every_s=30)
    plain.start(100, "qa: command")
    for _ in range(50):
        clock.now += 0.1
        plain.advance()
    clock.now += 30
    plain.advance()
    for _ in range(49):
        plain.advance()
    plain.finish()
    plain.finish()  # a second finish says nothing
    lines = stream.getvalue().splitlines()
    assert lines[0] == "qa: command: 0/100"
    assert lines[1].startswith("qa: command: 51/100 ")
    assert lines[2].startswith("qa: command: 100/100 in ")
    assert len(lines) == 3
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
