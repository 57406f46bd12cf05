"""Typed errors raised by the library; the faces turn them into messages and exit codes."""

from __future__ import annotations

from collections.abc import Sequence


class GoldgateError(Exception):
    """Base of every error goldgate reports to a user (exit code 2)."""

    exit_code = 2


class UsageError(GoldgateError):
    """A command was called with wrong arguments."""


class ConfigError(GoldgateError):
    """The configuration is invalid: names the file, the key path and a suggestion."""


class MetricError(ConfigError):
    """An unknown metric, an unknown option or a bad option value."""


class InputError(GoldgateError):
    """A data file is malformed: names the file and the line or id."""


class GoldenSetError(InputError):
    """A golden set is malformed: duplicate or missing ids, empty references, bad UTF-8."""


class BaselineError(GoldgateError):
    """The baseline is missing, damaged or does not match today's golden set or metrics."""


class SystemRunError(GoldgateError):
    """The system under test crashed, hung or returned too few or unknown outputs."""


class Terminated(BaseException):
    """A stop signal arrived: SIGTERM (a CI runner cancelling the job), SIGHUP (the terminal or
    SSH session closed) or SIGQUIT (Ctrl-\\). Unwind like Ctrl-C, then exit 128 + its number.

    A ``BaseException`` for the same reason as ``KeyboardInterrupt``: no ``except Exception``
    may swallow it, and every ``finally`` on the way out (killing a command's process group,
    closing the cache) still runs.
    """

    def __init__(self, signum: int = 15) -> None:
        super().__init__(signum)
        #: the signal's number (15, SIGTERM, unless another stop signal is named)
        self.signum = signum


def describe_exception(exc: BaseException, *, limit: int = 500) -> str:
    """``Type: message`` for an exception raised by someone else's code, safe to print.

    Its ``str()`` may itself raise, be huge or hold newlines and control characters (a
    model's text, a hostile plugin): the message is clipped and shown as a Python literal.
    """
    name = type(exc).__name__
    try:
        text = str(exc)
    except Exception as failed:  # a broken __str__ must not turn a clear error into a crash
        return f"{name} (its message could not be read: {type(failed).__name__})"
    if not text:
        return name
    if len(text) > limit:
        text = text[:limit] + "..."
    if text.isprintable():
        return f"{name}: {text}"
    return f"{name}: {text!r}"


def first_of(items: Sequence[str], limit: int) -> str:
    """``a, b, c and 7 more``: the first ``limit`` items of a list a message names."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def did_you_mean(word: str, choices: list[str] | tuple[str, ...] | set[str]) -> str:
    """Return ' (did you mean 'x'?)' for the nearest valid spelling, or '' when none is close."""
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def where_raised(exc: BaseException) -> str:
    """`` at file:line`` of the innermost frame that raised ``exc`` (a user's code), or ''."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return ""
    frame = frames[-1]
    return f" at {frame.filename}:{frame.lineno}"
