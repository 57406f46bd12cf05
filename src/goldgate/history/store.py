"""The history store: one SQLite file (``.goldgate/history.sqlite``) every run appends to.

Design points, each for a reason:

- **Versioned schema.** ``PRAGMA user_version`` holds the schema version; :data:`MIGRATIONS`
  lists the steps from an empty file, so a database written by an older goldgate is brought
  up to date in one transaction when it is opened (and a concurrent opener waits, then finds
  the work done).
- **WAL journal** and a generous busy timeout: two runs finishing at once both append, one
  waiting for the other's short write transaction.
- **Never hangs.** Every statement runs under a time limit (sqlite's progress handler
  interrupts one that outlasts the busy timeout plus :data:`TIME_LIMIT_S`), and a file holding
  a trigger or a view, which goldgate never writes and which could make a write or a read run
  for ever, is set aside as damaged.
- **Never fails the gate.** A damaged file, or one written by a newer goldgate (a schema
  version above ours), is renamed aside (``history.sqlite.damaged-<time>``,
  ``history.sqlite.v<N>-<time>``) with a warning and a fresh store is started; anything
  else that stops a write (a read-only folder, a lock held too long) is a warning and the
  run is simply not recorded. :func:`record_run` returns those warnings; it never raises a
  store problem. Readers alike (:func:`read_safely`): a recorded row that is not what goldgate
  writes (a text or non-finite score, a JSON column that does not parse, ids, digests and
  scores of different lengths, a table missing a column) is set aside with a warning, and the
  rest is shown.
- Per-example scores are kept as one JSON array per suite and metric (aligned with the
  suite's ids), not one row per example: recording a 10,000-example run is then a handful
  of inserts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Schema steps; step i brings a database from version i to i + 1. Never edit a released step.
MIGRATIONS: tuple[str, ...] = (
    # 1: runs and one score per suite and metric
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        created_at TEXT NOT NULL,
        commit_sha TEXT,
        branch TEXT,
        dirty INTEGER NOT NULL DEFAULT 0,
        config_hash TEXT,
        system TEXT,
        verdict TEXT NOT NULL,
        goldgate_version TEXT NOT NULL
    );
    CREATE INDEX runs_by_time ON runs (created_at);
    CREATE TABLE scores (
        run_id INTEGER NOT NULL REFERENCES runs (id),
        suite TEXT NOT NULL,
        metric TEXT NOT NULL,
        signature TEXT NOT NULL,
        score REAL NOT NULL,
        low REAL,
        high REAL,
        baseline REAL,
        PRIMARY KEY (run_id, suite, metric)
    );
    """,
    # 2: where a run came from, its commit's subject, the gate's status per metric, and
    #    per-example scores with the digest of each golden record (to find flaky examples)
    """
    ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'run';
    ALTER TABLE runs ADD COLUMN message TEXT;
    ALTER TABLE scores ADD COLUMN status TEXT;
    ALTER TABLE scores ADD COLUMN example_scores TEXT;
    CREATE TABLE suites (
        run_id INTEGER NOT NULL REFERENCES runs (id),
        suite TEXT NOT NULL,
        verdict TEXT NOT NULL,
        n_examples INTEGER NOT NULL,
        ids TEXT NOT NULL,
        digests TEXT NOT NULL,
        PRIMARY KEY (run_id, suite)
    );
    CREATE INDEX scores_by_metric ON scores (suite, metric, run_id);
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)
#: seconds a writer waits for another's transaction before giving up (and warning)
BUSY_TIMEOUT_S = 30.0
#: seconds one operation on the store (an append, a query) may run beyond the busy timeout
#: before it is interrupted: the longest seen is a few seconds (a million examples' scores)
TIME_LIMIT_S = 120.0
#: rows ``goldgate history`` reads at most (the newest): ``--last 0`` over a store of
#: millions of rows would otherwise hold them all
MAX_ROWS = 200_000
#: reasons a read set rows aside, listed at most (the rest are counted)
_ASIDE_SHOWN = 5


@dataclass(frozen=True)
class MetricRecord:
    """One metric of one suite in one run."""

    suite: str
    metric: str
    signature: str
    score: float
    #: the score's confidence band (baseline + the delta's interval), when there is one
    low: float | None = None
    high: float | None = None
    baseline: float | None = None
    #: the worst status of the gate's checks on this metric (fail, forgiven, ...), if gated
    status: str | None = None
    #: per-example scores aligned with the suite's ids (empty when not kept); an array is
    #: turned into JSON when it is stored, not held as a million Python floats before
    examples: Sequence[float] | npt.NDArray[np.float64] = ()


@dataclass(frozen=True)
class SuiteRecord:
    """One suite in one run: its verdict and the ids and record digests of its examples."""

    suite: str
    verdict: str
    ids: Sequence[str] = ()
    digests: Sequence[str] = ()


@dataclass(frozen=True)
class RunRecord:
    """Everything one run leaves in the history."""

    created_at: str
    verdict: str
    goldgate_version: str
    commit: str | None = None
    branch: str | None = None
    dirty: bool = False
    message: str | None = None
    config_hash: str | None = None
    system: str | None = None
    source: str = "run"
    suites: tuple[SuiteRecord, ...] = ()
    metrics: tuple[MetricRecord, ...] = ()


@dataclass(frozen=True)
class HistoryRow:
    """One metric of one suite in one recorded run, as ``goldgate history`` shows it."""

    run_id: int
    created_at: str
    commit: str | None
    branch: str | None
    dirty: bool
    message: str | None
    source: str
    verdict: str
    suite: str
    metric: str
    signature: str
    score: float
    low: float | None
    high: float | None
    baseline: float | None
    status: str | None


@dataclass(frozen=True)
class ExampleRun:
    """One run's per-example scores of one suite and metric."""

    run_id: int
    ids: list[str]
    digests: list[str]
    scores: list[float]
    #: what makes the system the same (its settings, the commit; None when unknown: outside
    #: git, or a dirty tree, whose changes are not known) and the metric's signature
    system: tuple[str, str] | None = None


class StoreProblem(Exception):
    """The store could not be used; the message says why (turned into a warning)."""


def _damage(exc: sqlite3.Error) -> bool:
    """True for errors that mean the file itself is bad (not a lock or a permission)."""
    if isinstance(exc, sqlite3.OperationalError):
        text = str(exc).lower()
        return "no such table" in text or "no such column" in text or "malformed" in text
    return isinstance(exc, sqlite3.DatabaseError)


class _Deadline:
    """When the operation under way must stop; sqlite's progress handler asks it."""

    def __init__(self) -> None:
        self.until = math.inf

    def start(self) -> None:
        """A new operation: the busy timeout (waiting for a lock) plus the time limit."""
        self.until = time.monotonic() + BUSY_TIMEOUT_S + TIME_LIMIT_S

    def passed(self) -> int:
        """Non-zero (interrupt the statement) once the time is up."""
        return int(time.monotonic() > self.until)


class HistoryStore:
    """An open history database (use :func:`open_store`)."""

    def __init__(self, path: Path, connection: sqlite3.Connection, deadline: _Deadline) -> None:
        self.path = path
        self._db = connection
        self._deadline = deadline
        #: why recorded rows were set aside by the reads so far (see :meth:`warnings`)
        self.set_aside: list[str] = []

    def warnings(self) -> list[str]:
        """The rows the reads so far set aside, as warnings (one line, the first few named)."""
        if not self.set_aside:
            return []
        shown = "; ".join(self.set_aside[:_ASIDE_SHOWN])
        more = len(self.set_aside) - _ASIDE_SHOWN
        tail = f"; and {more} more" if more > 0 else ""
        return [
            f"history: {self.path}: {len(self.set_aside)} recorded"
            f" {'row' if len(self.set_aside) == 1 else 'rows'} set aside, not what goldgate"
            f" writes ({shown}{tail})"
        ]

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        self._deadline.start()
        # IMMEDIATE takes the write lock at once, so two writers queue instead of deadlocking.
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            # an interrupted write was rolled back by sqlite already; the rollback itself is
            # not cut short by the time limit
            if self._db.in_transaction:
                self._deadline.start()
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def append(self, record: RunRecord) -> int:
        """Append one run; returns its id."""
        with self._write() as db:
            cursor = db.execute(
                "INSERT INTO runs (created_at, commit_sha, branch, dirty, config_hash, system,"
                " verdict, goldgate_version, source, message) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    record.created_at,
                    record.commit,
                    record.branch,
                    int(record.dirty),
                    record.config_hash,
                    record.system,
                    record.verdict,
                    record.goldgate_version,
                    record.source,
                    record.message,
                ),
            )
            run_id = cursor.lastrowid
            assert run_id is not None  # an INSERT always sets it
            # Rows are generated as sqlite takes them: at a million examples each row's JSON
            # lists are tens of MB, and building every one before the first insert would hold
            # them all at once.
            db.executemany(
                "INSERT INTO suites (run_id, suite, verdict, n_examples, ids, digests)"
                " VALUES (?,?,?,?,?,?)",
                (
                    (
                        run_id,
                        s.suite,
                        s.verdict,
                        len(s.ids),
                        _json_list(s.ids),
                        _json_list(s.digests),
                    )
                    for s in record.suites
                ),
            )
            db.executemany(
                "INSERT INTO scores (run_id, suite, metric, signature, score, low, high,"
                " baseline, status, example_scores) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    (
                        run_id,
                        m.suite,
                        m.metric,
                        m.signature,
                        m.score,
                        m.low,
                        m.high,
                        m.baseline,
                        m.status,
                        _json_list(m.examples) if len(m.examples) else None,
                    )
                    for m in record.metrics
                ),
            )
        return run_id

    def rows(
        self,
        *,
        suites: Sequence[str] = (),
        metrics: Sequence[str] = (),
        since: str | None = None,
        branch: str | None = None,
        last: int | None = None,
    ) -> list[HistoryRow]:
        """Recorded scores, oldest first; ``last`` keeps the newest N per suite and metric.

        At most the newest :data:`MAX_ROWS`; a row that is not what goldgate writes is left out
        and its reason added to :attr:`set_aside`.
        """
        where = []
        params: list[object] = []
        if suites:
            where.append(f"s.suite IN ({','.join('?' * len(suites))})")
            params += list(suites)
        if metrics:
            where.append(f"s.metric IN ({','.join('?' * len(metrics))})")
            params += list(metrics)
        if since is not None:
            where.append("r.created_at >= ?")
            params.append(since)
        if branch is not None:
            where.append("r.branch = ?")
            params.append(branch)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        query = (
            "SELECT r.id, r.created_at, r.commit_sha, r.branch, r.dirty, r.message, r.source,"
            " r.verdict, s.suite, s.metric, s.signature, s.score, s.low, s.high, s.baseline,"
            " s.status, ROW_NUMBER() OVER (PARTITION BY s.suite, s.metric ORDER BY r.id DESC)"
            f" AS age FROM scores s JOIN runs r ON r.id = s.run_id {clause}"
        )
        if last is not None:
            query = f"SELECT * FROM ({query}) WHERE age <= ?"
            params.append(last)
        # the newest MAX_ROWS at most (sorted back below): a hostile or vast store is never
        # read whole; the rest is said
        query += " ORDER BY 1 DESC LIMIT ?"
        params.append(MAX_ROWS + 1)
        self._deadline.start()
        found = self._db.execute(query, params).fetchall()
        if len(found) > MAX_ROWS:
            found = found[:MAX_ROWS]
            self.set_aside.append(
                f"more than {MAX_ROWS:,} rows match: only the newest {MAX_ROWS:,} are read"
                " (narrow with --since, --suite, --metric or --last)"
            )
        rows = []
        for row in found:
            checked = checked_row(row)
            if isinstance(checked, str):
                self.set_aside.append(
                    f"run {_shown(row[0])}, {_shown(row[8])} {_shown(row[9])}: {checked}"
                )
            else:
                rows.append(checked)
        rows.sort(key=lambda r: (r.suite, r.metric, r.run_id))
        return rows

    def example_runs(self, suite: str, metric: str, run_ids: Sequence[int]) -> list[ExampleRun]:
        """Per-example scores of one suite and metric in those of ``run_ids`` that kept them."""
        if not run_ids:
            return []
        marks = ",".join("?" * len(run_ids))
        query = (
            "SELECT s.run_id, u.ids, u.digests, s.example_scores, r.system, r.commit_sha,"
            " r.dirty, s.signature FROM scores s"
            " JOIN suites u ON u.run_id = s.run_id AND u.suite = s.suite"
            " JOIN runs r ON r.id = s.run_id"
            " WHERE s.suite = ? AND s.metric = ? AND s.example_scores IS NOT NULL"
            f" AND s.run_id IN ({marks}) ORDER BY s.run_id"
        )
        self._deadline.start()
        found = []
        for run_id, ids, digests, scores, system, commit, dirty, signature in self._db.execute(
            query, [suite, metric, *run_ids]
        ):
            run = _example_run(run_id, ids, digests, scores)
            if isinstance(run, str):
                self.set_aside.append(f"run {_shown(run_id)}, {suite} {metric}: {run}")
                continue
            same = (
                isinstance(system, str)
                and isinstance(commit, str)
                and dirty == 0
                and isinstance(signature, str)
            )
            found.append(
                ExampleRun(run.run_id, run.ids, run.digests, run.scores, (system, signature))
                if same
                else run
            )
        return found

    def count_runs(self) -> int:
        """How many runs are recorded."""
        self._deadline.start()
        return int(self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


#: the columns ``rows`` reads, after the run id: (name, the types it may hold)
_ROW_COLUMNS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("created_at", (str,)),
    ("commit_sha", (str, type(None))),
    ("branch", (str, type(None))),
    ("dirty", (int,)),
    ("message", (str, type(None))),
    ("source", (str,)),
    ("verdict", (str,)),
    ("suite", (str,)),
    ("metric", (str,)),
    ("signature", (str,)),
    ("score", (float,)),
    ("low", (float, type(None))),
    ("high", (float, type(None))),
    ("baseline", (float, type(None))),
    ("status", (str, type(None))),
)


def checked_row(row: Sequence[object]) -> HistoryRow | str:
    """A row of ``rows`` as a :class:`HistoryRow`, or why it is not what goldgate writes
    (sqlite keeps any value in any column): every text a text, every number finite."""
    if type(row[0]) is not int:
        return f"run id {_shown(row[0])} is not a number"
    values: list[object] = [row[0]]
    for (name, kinds), value in zip(_ROW_COLUMNS, row[1:16], strict=True):
        if float in kinds and type(value) is int:
            value = float(value)  # an integer in a REAL column: sqlite may keep it so
        if type(value) not in kinds:
            return f"{name} is {_kind(value)}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{name} is {value} (not a finite number)"
        values.append(bool(value) if name == "dirty" else value)
    return HistoryRow(*values)  # type: ignore[arg-type]  # each checked against its column


def _example_run(run_id: object, ids: object, digests: object, scores: object) -> ExampleRun | str:
    """The per-example columns parsed and checked, or why they are set aside."""
    if type(run_id) is not int:
        return f"run id {_shown(run_id)} is not a number"
    parsed = []
    for name, text in (("ids", ids), ("digests", digests), ("example scores", scores)):
        if not isinstance(text, str):
            return f"{name} are {_kind(text)}, not JSON text"
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return f"{name} are not JSON"
        if not isinstance(value, list):
            return f"{name} are not a JSON list"
        parsed.append(value)
    id_list, digest_list, score_list = parsed
    if not all(type(v) is str for v in id_list) or not all(type(v) is str for v in digest_list):
        return "ids or digests are not all texts"
    # NaN is written where an example has no score on the metric; an infinity never is
    if not all(type(v) in (int, float) and not math.isinf(v) for v in score_list):
        return "example scores are not all numbers"
    if not len(id_list) == len(digest_list) == len(score_list):
        return (
            f"{len(id_list)} ids, {len(digest_list)} digests and {len(score_list)} example"
            " scores (they go together)"
        )
    return ExampleRun(run_id, id_list, digest_list, [float(v) for v in score_list])


def _kind(value: object) -> str:
    if value is None:
        return "missing"
    if isinstance(value, bytes):
        return "binary"
    return f"a {type(value).__name__} ({_shown(value)})"


def _shown(value: object) -> str:
    """A recorded value in a warning: short (the console escapes it)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


#: items of a list turned into JSON at a time: a million Python floats (and the encoder's
#: pieces of text for them) are never held at once, only the text
_JSON_BATCH = 65_536


def _json_list(values: Sequence[object] | npt.NDArray[np.float64]) -> str:
    """``json.dumps`` of the list of ``values`` (the same text), a batch of items at a time."""
    pieces = []
    for start in range(0, len(values), _JSON_BATCH):
        batch = values[start : start + _JSON_BATCH]
        items = batch.tolist() if isinstance(batch, np.ndarray) else list(batch)
        pieces.append(json.dumps(items, ensure_ascii=False, separators=(",", ":"))[1:-1])
    return "[" + ",".join(pieces) + "]"


#: sqlite virtual-machine steps between two looks at the clock
_PROGRESS_STEPS = 10_000


def _connect(path: Path, deadline: _Deadline) -> sqlite3.Connection:
    # isolation_level=None: transactions are explicit (BEGIN IMMEDIATE), never implicit.
    db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    try:
        # every statement is bounded: past the deadline sqlite stops it ("interrupted")
        deadline.start()
        db.set_progress_handler(deadline.passed, _PROGRESS_STEPS)
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        # WAL is kept in the file: only its first writer switches it (asking for it again
        # would need the exclusive lock each time, in every process that opens the file)
        mode = db.execute("PRAGMA journal_mode").fetchone()
        if mode is None or str(mode[0]).lower() != "wal":
            mode = _when_unlocked(lambda: db.execute("PRAGMA journal_mode = WAL").fetchone())
        if mode is None or str(mode[0]).lower() != "wal":
            log.debug("history: %s is not in WAL mode (%s)", path, mode)
        db.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        db.close()
        raise
    return db


def _when_unlocked(action: Callable[[], T]) -> T:
    """``action``, tried again while sqlite refuses it as locked, up to ``BUSY_TIMEOUT_S``.

    Switching to WAL takes the exclusive lock from a shared one, and sqlite refuses that at
    once, without its busy timeout, while another connection writes (waiting could deadlock
    two such connections): two processes that create the history at once meet it.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.005
    while True:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_BUSY:
                raise
            if time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def _version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    if _version(db) == SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        version = _version(db)  # again, under the lock: another process may have migrated
        if version > SCHEMA_VERSION:
            raise _FutureVersion(version)
        for step in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[step].split(";"):
                if statement.strip():
                    db.execute(statement)
            log.info("history: %s migrated to schema %d", path, step + 1)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class _Planted(sqlite3.DatabaseError):
    """The file holds what goldgate never writes (a damage: the file is set aside)."""


def _check_schema(db: sqlite3.Connection) -> None:
    """The three tables are there, with every column goldgate reads, and nothing that runs
    code of its own: a trigger fires on every append and a view is a query, either of which
    could run for ever (or write elsewhere), so a file holding one is set aside."""
    planted = db.execute(
        "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view') LIMIT 1"
    ).fetchone()
    if planted is not None:
        raise _Planted(f"it holds a {planted[0]} goldgate never writes ({_shown(planted[1])})")
    # "no such column": a table missing one of ours is damage, found here rather than by the
    # first query that needs it
    db.execute(
        "SELECT r.id, r.created_at, r.commit_sha, r.branch, r.dirty, r.message, r.source,"
        " r.verdict, r.system, s.run_id, s.suite, s.metric, s.signature, s.score, s.low,"
        " s.high, s.baseline, s.status, s.example_scores, u.run_id, u.suite, u.ids, u.digests"
        " FROM runs r, scores s, suites u LIMIT 1"
    ).fetchall()


class _FutureVersion(Exception):
    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def set_aside(path: Path, label: str) -> Path:
    """Rename the database and its WAL files to ``<name>.<label>-<time>``; returns the new path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        companion = path.with_name(path.name + suffix)
        with contextlib.suppress(FileNotFoundError):
            os.replace(companion, target.with_name(target.name + suffix))
    return target


def open_store(path: Path, *, create: bool = True) -> tuple[HistoryStore, list[str]]:
    """Open (creating and migrating as needed) the store at ``path``.

    Returns the store and warnings: a damaged or newer-version file is set aside and a fresh
    one started. Raises :class:`StoreProblem` when no store can be opened at all (a read-only
    folder, a lock that outlasted the busy timeout), or when ``create`` is False and there is
    no file.
    """
    warnings: list[str] = []
    if not create and not path.exists():
        raise StoreProblem(f"{path}: no history recorded yet")
    for attempt in range(2):
        deadline = _Deadline()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = _connect(path, deadline)
        except OSError as exc:
            raise StoreProblem(f"{path}: cannot open the history: {exc.strerror or exc}") from None
        except sqlite3.Error as exc:
            if attempt == 0 and _damage(exc) and path.exists():
                warnings.append(_aside_message(path, "damaged", str(exc)))
                continue
            raise StoreProblem(f"{path}: cannot open the history: {exc}") from None
        try:
            _migrate(db, path)
            _check_schema(db)
        except _FutureVersion as future:
            db.close()
            if attempt == 0:
                warnings.append(
                    _aside_message(
                        path,
                        f"v{future.version}",
                        f"written by a newer goldgate (schema {future.version}, this one"
                        f" reads up to {SCHEMA_VERSION})",
                    )
                )
                continue
            raise StoreProblem(f"{path}: schema {future.version} is newer than ours") from None
        except sqlite3.Error as exc:
            db.close()
            if attempt == 0 and _damage(exc):
                warnings.append(_aside_message(path, "damaged", str(exc)))
                continue
            raise StoreProblem(f"{path}: cannot use the history: {exc}") from None
        return HistoryStore(path, db, deadline), warnings
    raise StoreProblem(f"{path}: cannot open the history")  # pragma: no cover - loop returns


def _aside_message(path: Path, label: str, reason: str) -> str:
    try:
        target = set_aside(path, "damaged" if label == "damaged" else label)
    except OSError as exc:
        raise StoreProblem(
            f"{path}: the history is unusable ({reason}) and cannot be set aside:"
            f" {exc.strerror or exc}"
        ) from None
    return (
        f"history: {path} was unusable ({reason}); set aside as {target.name}, a new history"
        " starts now"
    )


def _why(exc: sqlite3.Error) -> str:
    """An error's text, saying what an interruption was."""
    if str(exc) == "interrupted":
        return f"stopped after {BUSY_TIMEOUT_S + TIME_LIMIT_S:g} s (the time limit)"
    return str(exc)


def read_safely(path: Path, read: Callable[[HistoryStore], T], default: T) -> tuple[T, list[str]]:
    """``read`` of the store at ``path``, and warnings; ``default`` when it cannot be read.

    Never raises a store problem, as :func:`append_safely` does not: a file found damaged
    while it is read is set aside (the next run starts a new history), a lock or the time
    limit is a warning, and the rows ``read`` found bad are warnings too.
    """
    try:
        store, warnings = open_store(path, create=False)
    except StoreProblem as exc:
        return default, [f"history: {exc}"]
    try:
        with store:
            found = read(store)
            return found, [*warnings, *store.warnings()]
    except sqlite3.Error as exc:
        if not _damage(exc):
            why = _why(exc)
            return default, [*warnings, f"history: {path}: cannot read the history: {why}"]
        damaged = str(exc)
    try:
        return default, [*warnings, _aside_message(path, "damaged", damaged)]
    except StoreProblem as exc:
        return default, [*warnings, f"history: {exc}"]


def append_safely(path: Path, record: RunRecord) -> tuple[int | None, list[str]]:
    """Append ``record``; returns its id (None when not recorded) and warnings. Never raises."""
    try:
        store, warnings = open_store(path)
    except StoreProblem as exc:
        return None, [f"history: run not recorded: {exc}"]
    try:
        with store:
            return store.append(record), warnings
    except sqlite3.Error as exc:
        if not _damage(exc):
            return None, [*warnings, f"history: run not recorded: {path}: {_why(exc)}"]
        damaged = str(exc)
    # Damage found while writing: set the file aside and record into a fresh one.
    try:
        warnings.append(_aside_message(path, "damaged", damaged))
        store, more = open_store(path)
        with store:
            return store.append(record), warnings + more
    except (StoreProblem, sqlite3.Error) as exc:
        return None, [*warnings, f"history: run not recorded: {exc}"]
