"""WordNet synonyms for METEOR, read from WordNet's own dictionary files; NLTK is not imported.

METEOR's synonym stage needs, for a word, every lemma name of every synset that NLTK's
``wordnet.synsets(word)`` returns. That is reproduced here rule for rule: the word is
lowercased; for each part of speech in NLTK's order (noun, verb, adjective, adverb) its
``_morphy`` forms are the word itself plus either its exception-list bases or its suffix
rewrites, kept when the index lists them for that part of speech; each listed synset's lemma
names come from the data file at the listed byte offset, without their syntactic markers
(``galore(ip)`` is ``galore``).

Where the files come from (nothing is downloaded):

1. the ``wordnet`` option of the metric (a directory or a ``wordnet.zip``);
2. else ``$GOLDGATE_WORDNET``;
3. else the first that has them of NLTK's data directories (``$NLTK_DATA``, ``~/nltk_data``,
   ``/usr/share/nltk_data`` ...), as ``corpora/wordnet/`` or ``corpora/wordnet.zip``: where
   ``nltk.download("wordnet")`` puts them;
4. WordNet's own installations: ``$WNSEARCHDIR``, ``$WNHOME/dict``, Debian's and Ubuntu's
   ``/usr/share/wordnet`` (``apt-get install wordnet-base``).

A folder the user named (1 or 2) that is missing or holds no WordNet is an error naming it,
never a quiet fall back to another WordNet: that one may be another version, whose synonyms
change the scores.

The files are read with positioned reads of an in-memory copy, never through a shared file
position, so a process forked after loading (NLTK's reader breaks there) reads the same.
"""

from __future__ import annotations

import os
import re
import sys
import zipfile
from collections.abc import Iterable
from functools import cache, lru_cache
from pathlib import Path
from typing import Final

from goldgate.errors import MetricError
from goldgate.io.inputs import MAX_INPUT_BYTES, read_regular

NOUN, VERB, ADJ, ADV = "n", "v", "a", "r"
#: NLTK's POS_LIST: the order in which ``synsets`` walks the parts of speech.
POS_ORDER: Final = (NOUN, VERB, ADJ, ADV)
_FILE_NAMES: Final = {NOUN: "noun", VERB: "verb", ADJ: "adj", ADV: "adv"}
#: NLTK's MORPHOLOGICAL_SUBSTITUTIONS.
_SUBSTITUTIONS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    NOUN: (
        ("s", ""),
        ("ses", "s"),
        ("ves", "f"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ),
    VERB: (
        ("s", ""),
        ("ies", "y"),
        ("es", "e"),
        ("es", ""),
        ("ed", "e"),
        ("ed", ""),
        ("ing", "e"),
        ("ing", ""),
    ),
    ADJ: (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    ADV: (),
}
_VERSION: Final = re.compile(rb"Word[nN]et (\d+\+?|\d+\.\d+) Copyright")
_MARKER: Final = re.compile(r"(.*?)(\([^()]*\))?$")
_REQUIRED: Final = tuple(
    name for pos in POS_ORDER for name in (f"index.{_FILE_NAMES[pos]}", f"data.{_FILE_NAMES[pos]}")
)

HOW_TO_GET = (
    "METEOR needs WordNet 3.0 (nothing is downloaded at run time). Get it with"
    " `python -m nltk.downloader wordnet` (found in ~/nltk_data), or `apt-get install"
    " wordnet-base` on Debian/Ubuntu (found in /usr/share/wordnet), or point $GOLDGATE_WORDNET"
    " or the metric's `wordnet` option at a WordNet dict directory or wordnet.zip"
)


class WordNet:
    """The parts of one WordNet installation that METEOR reads."""

    def __init__(self, files: dict[str, bytes], source: str) -> None:
        self.source = source
        self._data = {pos: files[f"data.{name}"] for pos, name in _FILE_NAMES.items()}
        # index lines by lemma, parsed on first use: most lemmas are never asked for.
        self._index: dict[str, dict[str, bytes]] = {}
        for pos, name in _FILE_NAMES.items():
            lines: dict[str, bytes] = {}
            for line in files[f"index.{name}"].split(b"\n"):
                if line and not line.startswith(b" "):
                    lemma, _, _ = line.partition(b" ")
                    lines[lemma.decode("utf-8")] = line
            self._index[pos] = lines
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        for pos, name in _FILE_NAMES.items():
            table: dict[str, list[str]] = {}
            for raw in files.get(f"{name}.exc", b"").decode("utf-8").splitlines():
                terms = raw.split()
                if terms:
                    table[terms[0]] = terms[1:]
            self._exceptions[pos] = table
        match = _VERSION.search(self._data[ADJ][:4000])
        self.version = match.group(1).decode() if match else "unknown"
        self._synonyms: dict[str, frozenset[str]] = {}

    def synonyms(self, word: str) -> frozenset[str]:
        """Lemma names (without ``_``) of every synset of ``word``, plus the word itself.

        What NLTK's METEOR collects from ``wordnet.synsets(word)`` for one hypothesis word.
        """
        found = self._synonyms.get(word)
        if found is None:
            names = {word}
            lemma = word.lower()
            for pos in POS_ORDER:
                for form in self._morphy(lemma, pos):
                    for offset in self._offsets(form, pos):
                        names.update(n for n in self._lemma_names(pos, offset) if "_" not in n)
            found = self._synonyms[word] = frozenset(names)
        return found

    def _morphy(self, form: str, pos: str) -> list[str]:
        """NLTK's ``_morphy(form, pos)``: base forms that the index lists for ``pos``."""
        exceptions = self._exceptions[pos]
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [
                form[: -len(old)] + new for old, new in _SUBSTITUTIONS[pos] if form.endswith(old)
            ]
        index = self._index[pos]
        result: list[str] = []
        for candidate in [form, *forms]:
            if candidate in index and candidate not in result:
                result.append(candidate)
        return result

    @cache  # noqa: B019 - one reader per process, kept for its life
    def _offsets(self, lemma: str, pos: str) -> tuple[int, ...]:
        """The synset offsets that ``index.<pos>`` lists for ``lemma``."""
        line = self._index[pos].get(lemma)
        if line is None:
            return ()
        fields = line.split()
        n_synsets = int(fields[2])
        n_pointers = int(fields[3])
        start = 4 + n_pointers + 2
        return tuple(int(value) for value in fields[start : start + n_synsets])

    @cache  # noqa: B019 - one reader per process, kept for its life
    def _lemma_names(self, pos: str, offset: int) -> tuple[str, ...]:
        """The lemma names of the synset at ``offset`` of ``data.<pos>``."""
        data = self._data[pos]
        end = data.find(b"\n", offset)
        line = data[offset : end if end >= 0 else len(data)].decode("utf-8")
        if not line.startswith(f"{offset:08d}"):
            raise MetricError(f"WordNet in {self.source}: no synset at data.{pos} offset {offset}")
        fields = line.split("|", 1)[0].split()
        count = int(fields[3], 16)
        names = []
        for k in range(count):
            match = _MARKER.match(fields[4 + 2 * k])
            assert match is not None  # the pattern matches any string
            names.append(match.group(1))
        return tuple(names)


def candidate_locations() -> list[Path]:
    """Where WordNet is looked for when the user names none, in order (3 and 4 of the module
    docstring)."""
    places: list[Path] = []
    for root in _nltk_data_dirs():
        places += [root / "corpora" / "wordnet", root / "corpora" / "wordnet.zip"]
    if os.environ.get("WNSEARCHDIR"):
        places.append(Path(os.environ["WNSEARCHDIR"]))
    if os.environ.get("WNHOME"):
        places.append(Path(os.environ["WNHOME"]) / "dict")
    places += [Path("/usr/share/wordnet"), Path("/usr/local/WordNet-3.0/dict")]
    return places


def _nltk_data_dirs() -> Iterable[Path]:
    """NLTK's ``nltk.data.path`` for this platform, without importing NLTK."""
    for entry in os.environ.get("NLTK_DATA", "").split(os.pathsep):
        if entry:
            yield Path(entry).expanduser()
    yield Path("~/nltk_data").expanduser()
    for prefix in (sys.prefix, sys.base_prefix):
        yield Path(prefix) / "nltk_data"
        yield Path(prefix) / "share" / "nltk_data"
        yield Path(prefix) / "lib" / "nltk_data"
    for root in ("/usr/share", "/usr/local/share", "/usr/lib", "/usr/local/lib"):
        yield Path(root) / "nltk_data"


def _read_directory(path: Path) -> dict[str, bytes] | None:
    if not all((path / name).is_file() for name in _REQUIRED):
        return None
    files = {}
    for pos in POS_ORDER:
        name = _FILE_NAMES[pos]
        for filename in (f"index.{name}", f"data.{name}", f"{name}.exc"):
            if (path / filename).is_file():
                # Regular files only, bounded: a data file replaced by a FIFO or a link to
                # /dev/zero is an error, not a hang.
                files[filename] = read_regular(path / filename, MetricError, what="WordNet file")
    return files


def _read_zip(path: Path) -> dict[str, bytes] | None:
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile):
        return None
    with archive:
        members = {Path(member).name: member for member in archive.namelist()}
        if not all(name in members for name in _REQUIRED):
            return None
        wanted = [
            f"{kind}.{_FILE_NAMES[pos]}" for pos in POS_ORDER for kind in ("index", "data")
        ] + [f"{_FILE_NAMES[pos]}.exc" for pos in POS_ORDER]
        files = {}
        for name in wanted:
            if name in members:
                # The size the archive declares bounds what zipfile inflates (a zip bomb).
                if archive.getinfo(members[name]).file_size > MAX_INPUT_BYTES:
                    raise MetricError(
                        f"{path}: {name} is larger than {MAX_INPUT_BYTES:,} bytes,"
                        " the most goldgate reads"
                    )
                files[name] = archive.read(members[name])
        return files


def _has_files(place: Path) -> bool:
    if place.suffix == ".zip":
        try:
            with zipfile.ZipFile(place) as archive:
                names = {Path(member).name for member in archive.namelist()}
        except (OSError, zipfile.BadZipFile):
            return False
        return all(name in names for name in _REQUIRED)
    return all((place / name).is_file() for name in _REQUIRED)


def _named_location(option: str | None = None) -> tuple[Path, str] | None:
    """The WordNet the user named (the option, else ``$GOLDGATE_WORDNET``) and who named it."""
    if option:
        return Path(option).expanduser(), "the metric's wordnet option"
    if os.environ.get("GOLDGATE_WORDNET"):
        return Path(os.environ["GOLDGATE_WORDNET"]).expanduser(), "$GOLDGATE_WORDNET"
    return None


def locate_wordnet(option: str | None = None) -> Path:
    """Where the WordNet to read is (see the module docstring), without reading it;
    ``MetricError`` naming the folder the user named when it holds none, or saying how to
    get one when there is none at all."""
    named = _named_location(option)
    if named is not None:
        place, who = named
        if _has_files(place):
            return place
        problem = "does not exist" if not place.exists() else "holds no WordNet dictionary files"
        needed = ", ".join(_REQUIRED)
        raise MetricError(
            f"no WordNet dictionary files in {place} ({who}): it {problem}; a WordNet dict"
            f" directory or wordnet.zip holds {needed}. {HOW_TO_GET}"
        )
    places = candidate_locations()
    for place in places:
        if _has_files(place):
            return place
    looked = ", ".join(str(p) for p in places[:4]) + ", ..."
    raise MetricError(f"{HOW_TO_GET}. Looked in {looked}")


@lru_cache(maxsize=8)
def load_wordnet(option: str | None = None) -> WordNet:
    """The first WordNet found, read (``locate_wordnet`` says where, or why not)."""
    place = locate_wordnet(option)
    try:
        files = _read_zip(place) if place.suffix == ".zip" else _read_directory(place)
    except OSError as exc:
        raise MetricError(f"cannot read WordNet in {place}: {exc.strerror}") from None
    if files is None:
        raise MetricError(f"no WordNet dictionary files in {place}. {HOW_TO_GET}")
    return WordNet(files, str(place))
