"""The one output layer: every line goldgate writes to a terminal or a CI log passes here.

goldgate prints text it does not control — golden ids and tags, model outputs, a system's
stderr, API error bodies, paths a user typed. On a terminal, ESC/OSC sequences in that text
would drive the terminal; in a GitHub Actions log, a line starting with ``::`` (or holding
``##[``) is a workflow command the runner executes (``::add-mask::``, ``::stop-commands::``,
annotations). So nothing reaches stdout or stderr except through :func:`out`, :func:`err` or
:func:`clean`, which guarantee:

- no control character survives raw: C0 (but tab and the newlines that separate lines), DEL,
  C1, bidirectional overrides and isolates, line/paragraph separators are shown escaped
  (``\\x1b``, ``\\u202e``); a carriage return is escaped, as the runner would read it as a
  line break;
- no line starts with ``::`` (leading whitespace ignored, as the runner ignores it): its first
  colon is shown as ``\\x3a``; ``##[`` (the runner's legacy command syntax, honoured anywhere in
  a line) is shown as ``##\\x5b``;
- registered secrets (the API token) are replaced with ``***``.

goldgate's own workflow commands are built by :func:`workflow_command`, which escapes
properties and data the way GitHub documents, and written by :func:`command` — the only path
that may put ``::`` at the start of a line.

This module imports nothing from goldgate, so every face (CLI, pytest plugin, GitHub mode)
can use it.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
from collections.abc import Iterable, Iterator
from typing import TextIO

REDACTED = "***"
#: Shorter "secrets" are not real tokens; redacting them would garble every message.
MIN_SECRET_CHARS = 4

# Code points shown escaped: C0 controls (tab and newline are handled by the callers), DEL, C1,
# Arabic letter mark, LRM/RLM, line and paragraph separators, bidi embeddings/overrides
# (U+202A-202E) and isolates (U+2066-2069), the BOM/zero-width no-break space, and lone
# surrogates (which no stream can encode).
_OTHER_CONTROLS = (
    "\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ud800-\udfff"
)
_CONTROL = re.compile(f"[\x00-\x08\x0a-\x1f{_OTHER_CONTROLS}]")
_CONTROL_KEEP_NEWLINE = re.compile(f"[\x00-\x08\x0b-\x1f{_OTHER_CONTROLS}]")
_LEGACY_COMMAND = "##["

_secrets: set[str] = set()
_lock = threading.Lock()


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def add_secret(secret: str | None) -> None:
    """Redact ``secret`` from everything written from now on (and from :func:`redact`)."""
    if secret and len(secret) >= MIN_SECRET_CHARS:
        with _lock:
            _secrets.add(secret)


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    for secret in sorted(_secrets, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def inline(value: object) -> str:
    """Untrusted text for the inside of one line: every control character escaped, newlines too.

    Use it where an id, a tag or an output is quoted inside a message, so that a newline in it
    cannot split the message; :func:`clean` (applied by :func:`out` and :func:`err`) makes the
    whole line safe anyway.
    """
    return clean(str(value).replace("\n", "\\x0a"))


def escape_controls(text: str) -> str:
    """``text`` with its control characters shown escaped (``\\u202e``), as on the terminal.

    Tabs and newlines stay; nothing else changes (no redaction, no ``::`` handling). The reports
    (Markdown, HTML) use it so that a bidi override or an escape sequence from model output
    reads the same in ``report.md`` and ``report.html`` as on the terminal.
    """
    return _CONTROL_KEEP_NEWLINE.sub(_escape_char, text)


def clean(text: str) -> str:
    """Text safe to write as lines: controls escaped, no line starting with ``::``, no secrets.

    Newlines and tabs stay; everything else listed in the module docstring is escaped.
    """
    lines = escape_controls(redact(text)).split("\n")
    for i, line in enumerate(lines):
        # The runner trims leading whitespace before it looks for ``::``.
        stripped = line.lstrip()
        if stripped.startswith("::"):
            line = line[: len(line) - len(stripped)] + "\\x3a" + stripped[1:]
        lines[i] = line.replace(_LEGACY_COMMAND, "##\\x5b")
    return "\n".join(lines)


def json_text(text: str) -> str:
    """JSON text (from ``json.dumps``) safe to print: controls left raw become ``\\uXXXX``.

    ``json.dumps`` escapes C0 but not DEL, C1 or bidi controls; ``##[`` can only occur inside
    a string, where ``\\u005b`` is the same character. The JSON value is unchanged.
    """
    text = _CONTROL_KEEP_NEWLINE.sub(lambda m: f"\\u{ord(m.group()):04x}", redact(text))
    return text.replace(_LEGACY_COMMAND, "##\\u005b")


def _write(stream: TextIO, text: str, end: str) -> None:
    shown = clean(text) + end
    with reader_may_leave(stream):
        try:
            stream.write(shown)
        except UnicodeEncodeError:
            # A stream that cannot encode some character (PYTHONIOENCODING=ascii, a Windows
            # console): show it as an escape rather than crash on an id or an output.
            encoding = getattr(stream, "encoding", None) or "ascii"
            stream.write(shown.encode(encoding, "backslashreplace").decode(encoding))
        stream.flush()


@contextlib.contextmanager
def reader_may_leave(stream: TextIO | None = None) -> Iterator[None]:
    """Write to ``stream`` (stdout by default), whose reader may close the pipe early.

    ``goldgate run | head -1``: a reader that stops reading changes nothing goldgate has
    decided. The rest of the output goes to ``os.devnull``, as Python's documentation on
    SIGPIPE recommends, and the command carries on, so its exit code stays the verdict's.
    Write and flush inside the block: a pipe's buffered text only fails when flushed.
    """
    target = stream or sys.stdout
    try:
        yield
    except BrokenPipeError:
        _discard_output(target)


def _discard_output(stream: TextIO) -> None:
    """Point ``stream``'s descriptor at ``os.devnull``: what is still buffered goes nowhere."""
    try:
        descriptor = stream.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (a test's StringIO): nothing
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)
    with contextlib.suppress(OSError, ValueError):
        stream.flush()  # the text the closed pipe refused is dropped now, not at exit


def out(*parts: object, sep: str = " ", end: str = "\n", stream: TextIO | None = None) -> None:
    """Like ``print`` to stdout, through :func:`clean`."""
    _write(stream or sys.stdout, sep.join(str(p) for p in parts), end)


def err(*parts: object, sep: str = " ", end: str = "\n") -> None:
    """Like ``print`` to stderr, through :func:`clean`."""
    _write(sys.stderr, sep.join(str(p) for p in parts), end)


# -- goldgate's own workflow commands ---------------------------------------------------------


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub documents (and controls shown escaped)."""
    text = redact(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return _CONTROL.sub(_escape_char, text).replace(_LEGACY_COMMAND, "##\\x5b")


def escape_property(text: str) -> str:
    """A workflow command's property value: data escaping plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_command(name: str, message: str, properties: Iterable[tuple[str, str]] = ()) -> str:
    """``::name key=value,...::message`` with every untrusted part escaped."""
    if not re.fullmatch(r"[a-z][a-z-]*", name):
        raise ValueError(f"not a workflow command name: {name!r}")
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def command(line: str, *, stream: TextIO | None = None) -> None:
    """Write one workflow command built by :func:`workflow_command` (stdout by default)."""
    if "\n" in line or "\r" in line or not line.startswith("::"):
        raise ValueError("a workflow command is one line starting with '::'")
    target = stream or sys.stdout
    with reader_may_leave(target):
        target.write(line + "\n")
        target.flush()


def mask(secret: str, *, stream: TextIO | None = None) -> None:
    """Ask the GitHub runner to mask ``secret`` in the log: ``::add-mask::`` (unredacted)."""
    if not secret:
        return
    # The secret itself must reach the runner, so this line bypasses redaction on purpose.
    data = secret.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    target = stream or sys.stdout
    with reader_may_leave(target):
        target.write(f"::add-mask::{data}\n")
        target.flush()
