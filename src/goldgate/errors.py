"""Typed errors raised by the library; the faces turn them into messages and exit codes."""

from __future__ import annotations


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


def did_you_mean(word: str, choices: list[str] | tuple[str, ...] | set[str]) -> str:
    """Return ' (did you mean 'x'?)' for the nearest valid spelling, or '' when none is close."""
    import difflib

    close = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""
