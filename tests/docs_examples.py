"""The fenced blocks of the README and of every ``docs/**/*.md`` page, and how each is checked.

The conventions (``docs/contributing/docs.md`` states them for writers):

- ````yaml title="goldgate.yaml"```` is a whole configuration, validated as ``goldgate check``
  validates one (the schema, then every metric built with its options), where it stands on
  its page (after the blocks above it have run);
- ````yaml title="goldgate.yaml (excerpt)"```` is a fragment from the top-level keys down,
  deep-merged into ``MINIMAL_CONFIG`` and validated the same way (a ``system`` it gives
  replaces the minimal one's: the kinds exclude each other);
- ````console```` holds ``$ command`` lines (``> `` lines continue one) and the output they
  print; a page's console and python blocks run in order in one copy of the bundled example
  project, in one shell, and the output is compared after ``normalise``; a ``...`` line
  matches any lines and ``...`` in a line any text; a command shown without output must exit 0;
- ````python```` blocks run (in that copy, after the console blocks before them);
- a block preceded by ``<!-- docs: no-run (reason) -->`` is not run (it needs GitHub, the
  network, ...); every ``goldgate`` command line in a shell block, run or not, must still parse.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: What an excerpt is merged into: the smallest configuration that validates.
MINIMAL_CONFIG: dict[str, Any] = {
    "version": 1,
    "system": {"predictions": "predictions/{suite}.jsonl"},
    "suites": {"qa": {"goldens": "goldens/qa.jsonl", "metrics": {"exact_match": {}}}},
}

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
_NO_RUN = re.compile(r"<!--\s*docs:\s*no-run\s*\((?P<reason>[^)]+)\)\s*-->\s*$")
_TITLE = re.compile(r'title="(?P<title>[^"]*)"')


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: Path
    line: int
    lang: str
    title: str
    body: str
    no_run: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every Markdown page of the site (new pages are found by globbing)."""
    docs = ROOT / "docs"
    found = sorted(p for p in docs.rglob("*.md") if "hooks" not in p.relative_to(docs).parts)
    return [ROOT / "README.md", *found]


def blocks(page: Path) -> Iterator[Block]:
    text = page.read_text(encoding="utf-8")
    for match in _FENCE.finditer(text):
        info = match.group("info").strip()
        lang = info.split(None, 1)[0].lower() if info else ""
        title_match = _TITLE.search(info)
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines())
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        no_run = _NO_RUN.search(before)
        yield Block(
            page=page,
            line=text.count("\n", 0, match.start()) + 1,
            lang=lang,
            title=title_match.group("title") if title_match else "",
            body=body + "\n",
            no_run=no_run.group("reason").strip() if no_run else None,
        )


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks(page)]


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` over ``base``: mappings merged key by key, anything else replaced."""
    merged = dict(base)
    for key, value in extra.items():
        if key == "system":
            merged[key] = value
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


# -- console blocks -----------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    block: Block
    line: int
    command: str
    expected: str


def commands(block: Block) -> list[Command]:
    """The ``$`` commands of a console block with the output shown after each."""
    found: list[Command] = []
    current: list[str] | None = None
    output: list[str] = []
    start = 0
    continuing = False
    for index, line in enumerate(block.body.splitlines()):
        if line.startswith("$ ") or line == "$":
            if current is not None:
                found.append(Command(block, start, "\n".join(current), "\n".join(output)))
            current, output, start = [line[2:]], [], block.line + 1 + index
            continuing = True
        elif continuing and current is not None and (line.startswith("> ") or line == ">"):
            current.append(line[2:])
        else:
            continuing = False
            if current is None:
                raise AssertionError(f"{block.where}: output before any `$ command` line")
            output.append(line)
    if current is not None:
        found.append(Command(block, start, "\n".join(current), "\n".join(output)))
    return found


_PROGRESS = re.compile(r"[^\s:]+: [a-z]+: \d+/\d+.*")
_ABSOLUTE_DIR = re.compile(r"(?<![\w.~])/(?:[^\s/'\"():,;`]+/)+")
_TIME = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:\d\d)?")
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|µs|s)\b")
_VERSION = re.compile(r"(version:|goldgate )\d+\.\d+\.\d+\S*")


def normalise(text: str) -> str:
    """What may differ between the run in the test and the run the page shows."""
    text = "\n".join(line for line in text.splitlines() if not _PROGRESS.fullmatch(line))
    text = _ABSOLUTE_DIR.sub("/…/", text)
    text = _TIME.sub("<time>", text)
    text = _DURATION.sub("<duration>", text)
    text = _VERSION.sub(r"\1<version>", text)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def matches(expected: str, actual: str) -> bool:
    """``actual`` equals ``expected`` where ``...`` lines match any lines, ``...`` any text."""
    parts = []
    for line in expected.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append("[^\\n]*".join(map(re.escape, line.split("..."))) + r"\n")
    pattern = "".join(parts)
    return re.fullmatch(pattern, actual + "\n", re.S) is not None
