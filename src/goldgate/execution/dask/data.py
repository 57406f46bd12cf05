"""Golden sets and predictions of many files or fsspec URLs, read on a Dask cluster.

With ``engine.dask``, ``goldens`` and ``system.predictions`` may be a glob of many files
(``data/part-*.jsonl``) or any fsspec URL (``s3://bucket/qa/*.parquet``, ``file:///...``).
The files are listed here (as Dask does) and read on the workers, one partition per file,
each opened through the same fsspec filesystem and bounded as a local input is (a regular
file of at most :data:`~goldgate.io.inputs.MAX_INPUT_BYTES`; Parquet also in what it decodes to):
JSON Lines as the file's bytes, decoded and split exactly as goldgate reads a local file, so a
bad byte or line is named the same way; Parquet decoded by pyarrow batch by batch
(``dask.dataframe.read_parquet`` would go through pandas, where an integer id beside a null
becomes a float and lists become arrays: goldgate's record rules could no longer say what the
file holds). Each partition is validated on its worker with goldgate's own
record rules; an error names the file and the line (Parquet: the row) and the id.

A predictions system is then scored where the partitions live:

1. golden and prediction partitions are read, validated and kept on the workers; only their
   ids and lines come back here;
2. here: an id twice across partitions, a prediction for an id the golden set lacks and a
   golden id without prediction are refused, as a local read refuses them;
3. each golden partition is joined on the cluster with the prediction partitions that hold
   its ids (the texts travel between workers, not through this process) and scored there to
   per-example statistics;
4. the partitions' records, outputs and statistics come back in file order (files sorted by
   name, then line): what ``result.json`` and the baseline hold, nothing more. The content
   hash, every score, the bootstrap and ``result.json`` are those of a local run over the same
   records (a record's line is kept only for a one-file set: a line of which file?).

A worker that dies is replaced and its partition read again by the scheduler; a partition that
keeps killing workers is a
:class:`~goldgate.execution.dask.engine.DaskWorkerError`: no partial score.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from goldgate.errors import (
    GoldenSetError,
    GoldgateError,
    InputError,
    MetricError,
    SystemRunError,
    first_of,
)
from goldgate.execution.backend import SuiteScoring, needs_cluster
from goldgate.io.inputs import MAX_INPUT_BYTES, open_regular
from goldgate.io.parquet import PARQUET_SUFFIXES
from goldgate.io.text_inputs import decode_utf8, json_lines
from goldgate.model.golden_formats import JSONL_SUFFIXES, _read_jsonl, validated_records
from goldgate.model.golden_hashing import content_hash
from goldgate.model.golden_records import GoldenRecord
from goldgate.model.goldens import GoldenSet, _surrogate_error

if TYPE_CHECKING:
    from goldgate.execution.backend import FloatArray, MetricPairs
    from goldgate.model.config import Config
    from goldgate.terminal.progress import ProgressReporter

T = TypeVar("T")

#: ids a message shows before "and N more"
SHOWN_IDS = 10
#: (ids, lines) of one partition
_Ids = tuple[list[str], list[int]]


@dataclass(frozen=True)
class _Partitions:
    """The files of one location, each a partition computed (and kept) on the cluster."""

    location: str
    labels: list[str]  # each file as messages name it
    futures: list[Any]


def _client(config: Config, name: str, location: str) -> Any:
    from goldgate.execution.dask.engine import client_for

    if config.engine.dask is None:
        raise needs_cluster(name, location)
    return client_for(config.engine.dask)


def _module(name: str) -> Any:
    # Typed as Any: dask's and fsspec's annotations are partial (as in dask_engine).
    return importlib.import_module(name)


def _is_parquet(location: str) -> bool:
    return location.lower().endswith(PARQUET_SUFFIXES)


def _files(location: str, error: type[GoldgateError], what: str) -> tuple[Any, list[str]]:
    """The fsspec filesystem and the files of ``location``, sorted by name; none is an error."""
    get_fs_token_paths = _module("fsspec.core").get_fs_token_paths
    if not location.lower().endswith(JSONL_SUFFIXES + PARQUET_SUFFIXES):
        known = ", ".join(JSONL_SUFFIXES + PARQUET_SUFFIXES)
        raise error(f"{location}: a {what} read on a Dask cluster is one of {known}")
    try:
        fs, _, paths = get_fs_token_paths(location, mode="rb")
        paths = sorted(paths)
        if not paths or not all(fs.isfile(path) for path in paths):
            raise error(
                f"{location}: {what} not found" if paths else f"{location}: no file matches"
            )
    except GoldgateError:
        raise
    except (OSError, ValueError, ImportError) as exc:  # ImportError: "Install s3fs to access S3"
        raise error(f"{location}: cannot list the {what}: {exc}") from None
    return fs, paths


def _read(
    client: Any,
    location: str,
    error: type[GoldgateError],
    what: str,
    task: Any,
    *args: Any,
    columns: tuple[str, ...] | None = None,
) -> _Partitions:
    """Every file of ``location`` read by ``task(raw, label, *args)`` on the cluster, kept there.

    ``columns``: the only Parquet columns read (see :func:`goldgate.io.parquet.iter_rows`)."""
    dask = _module("dask")
    fs, paths = _files(location, error, what)
    labels = [fs.unstrip_protocol(path) if "://" in location else path for path in paths]
    if _is_parquet(location):
        raws = [
            dask.delayed(_parquet_rows)(fs, path, label, error, what, columns)
            for path, label in zip(paths, labels, strict=True)
        ]
    else:
        raws = [
            dask.delayed(_jsonl_bytes)(fs, path, label, error, what)
            for path, label in zip(paths, labels, strict=True)
        ]
    parts = [
        dask.delayed(task, pure=True)(raw, label, *args)
        for raw, label in zip(raws, labels, strict=True)
    ]
    return _Partitions(location, labels, list(client.compute(parts)))


# -- on a worker ----------------------------------------------------------------------------------


@contextmanager
def _open_part(
    fs: Any, path: str, label: str, error: type[GoldgateError], what: str
) -> Iterator[IO[bytes]]:
    """One partition's file, opened only if it is a regular file within the input cap.

    A local file is opened as every local input is (:func:`goldgate.io.inputs.open_regular`: a
    link to ``/dev/zero`` or a FIFO is refused, never read); a remote one only if the store
    says it holds at most :data:`~goldgate.io.inputs.MAX_INPUT_BYTES`."""
    with ExitStack() as stack:
        try:
            if isinstance(fs, _module("fsspec.implementations.local").LocalFileSystem):
                handle = stack.enter_context(open_regular(Path(path), error, what=what))
            else:
                size = fs.size(path)
                if size is not None and size > MAX_INPUT_BYTES:
                    raise error(
                        f"{label}: {what} is larger than {MAX_INPUT_BYTES:,} bytes,"
                        " the most goldgate reads"
                    )
                handle = stack.enter_context(fs.open(path, "rb"))
        except FileNotFoundError:
            raise error(f"{label}: {what} not found") from None
        yield handle


def _jsonl_bytes(fs: Any, path: str, label: str, error: type[GoldgateError], what: str) -> bytes:
    """A JSON Lines partition's bytes, at most the input cap (a file that grows is cut off)."""
    with _open_part(fs, path, label, error, what) as handle:
        data = handle.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise error(
            f"{label}: {what} is larger than {MAX_INPUT_BYTES:,} bytes, the most goldgate reads"
        )
    return data


def _parquet_rows(
    fs: Any,
    path: str,
    label: str,
    error: type[GoldgateError],
    what: str,
    columns: tuple[str, ...] | None = None,
) -> list[tuple[int, dict[str, Any]]]:
    from goldgate.io.parquet import iter_rows

    with _open_part(fs, path, label, error, what) as handle:
        return list(iter_rows(label, error, what=what, source=handle, columns=columns))


def _golden_part(raw: Any, label: str) -> list[GoldenRecord]:
    """One file's validated records (the checks and messages of ``load_goldens``)."""
    if isinstance(raw, bytes):
        rows = _read_jsonl(decode_utf8(raw, label, GoldenSetError), label)
    else:
        rows = ((number, number, row) for number, row in raw)
    records, seen = validated_records(rows, label)
    try:
        content_hash(records)  # only a lone surrogate fails it; named here, with its file
    except UnicodeEncodeError:
        raise _surrogate_error(tuple(records), label, seen) from None
    return records


_Prediction = tuple[str, int, list[str]]


def _prediction_part(raw: Any, label: str, samples: int) -> list[_Prediction]:
    """One file's ``(id, line, outputs)`` (the checks and messages of ``read_predictions``)."""
    from goldgate.systems.predictions import _prediction_outputs, prediction_id

    rows: Iterable[tuple[int, Any]] = raw
    if isinstance(raw, bytes):
        rows = json_lines(decode_utf8(raw, label, InputError), label, InputError)
    found: list[_Prediction] = []
    lines: dict[str, int] = {}
    for number, item in rows:
        where = f"{label}:{number}"
        record_id = prediction_id(item, where, number, lines)
        found.append(
            (record_id, number, _prediction_outputs(item, samples, f"{where}: id {record_id!r}"))
        )
    return found


def _golden_ids(part: list[GoldenRecord]) -> _Ids:
    return [record.id for record in part], [record.line for record in part]


def _prediction_ids(part: list[_Prediction]) -> _Ids:
    return [item[0] for item in part], [item[1] for item in part]


#: a metric that failed on a partition: (sample, spec, index in the partition, problem)
_Failure = tuple[int, str, int, str]


def _score_part(
    pairs: MetricPairs,
    records: list[GoldenRecord],
    keep_lines: bool,
    samples: int,
    *predictions: list[_Prediction],
) -> tuple[list[GoldenRecord], list[list[str]], list[list[FloatArray]], _Failure | None]:
    """Join one golden partition with its predictions and score it, sample by sample."""
    from goldgate.execution.pool import score_arrays
    from goldgate.metrics.engine import MetricComputeError

    wanted = {record.id for record in records}
    found = {rid: outs for part in predictions for rid, _, outs in part if rid in wanted}
    outputs = [found[record.id] for record in records]
    references = [list(record.references) for record in records]
    stats: list[list[FloatArray]] = []
    failure: _Failure | None = None
    for sample in range(samples if pairs else 0):
        candidates = [outs[sample] for outs in outputs]
        try:
            stats.append(score_arrays(pairs, candidates, references, jobs=1))
        except MetricComputeError as exc:
            failure = (sample, exc.spec, exc.index, exc.problem)
            break
    if not keep_lines:
        records = [replace(record, line=0) for record in records]
    return records, outputs, stats, failure


# -- here -----------------------------------------------------------------------------------------


def _result(future: Any, config: Config) -> Any:
    """A task's result; workers that kept dying, a cluster gone or left without workers are a
    DaskWorkerError (see dask_engine.result_of)."""
    from goldgate.execution.dask.engine import no_workers_timeout, result_of

    assert config.engine.dask is not None  # only a configured cluster has partitions
    return result_of(
        future,
        patience_s=no_workers_timeout(config.engine.dask),
        what="reading or scoring a partition",
    )


def _unique(parts: _Partitions, ids: list[_Ids], error: type[GoldgateError]) -> dict[str, int]:
    """id → the partition holding it; an id in two partitions is an error naming both."""
    first: dict[str, tuple[int, int]] = {}
    for index, (part_ids, lines) in enumerate(ids):
        for record_id, line in zip(part_ids, lines, strict=True):
            seen = first.get(record_id)
            if seen is not None:
                raise error(
                    f"{parts.labels[index]}:{line}: duplicate id {record_id!r}"
                    f" (first on {parts.labels[seen[0]]}:{seen[1]})"
                )
            first[record_id] = (index, line)
    return {record_id: index for record_id, (index, _) in first.items()}


def _read_goldens(client: Any, config: Config, name: str) -> tuple[_Partitions, list[_Ids]]:
    location = config.suites[name].goldens_location
    goldens = _read(client, location, GoldenSetError, "golden set", _golden_part)
    ids = [_result(client.submit(_golden_ids, part), config) for part in goldens.futures]
    if not any(part_ids for part_ids, _ in ids):
        raise GoldenSetError(f"{location}: the golden set is empty")
    return goldens, ids


def load_goldens_on_dask(config: Config, name: str) -> GoldenSet:
    """A suite's golden set (a glob or URL), read and validated on the cluster, gathered here.

    For a system that runs here or calls a function per input (``command``, ``callable``),
    and for ``check``: they need every record.
    """
    client = _client(config, name, config.suites[name].goldens_location)
    goldens, ids = _read_goldens(client, config, name)
    try:
        _unique(goldens, ids, GoldenSetError)
        keep_lines = len(goldens.futures) == 1
        records = [
            record if keep_lines else replace(record, line=0)
            for future in goldens.futures
            for record in _result(future, config)
        ]
    finally:
        client.cancel(goldens.futures)
    return _golden_set(config, name, records)


def _golden_set(config: Config, name: str, records: list[GoldenRecord]) -> GoldenSet:
    frozen = tuple(records)
    return GoldenSet(
        suite=name,
        path=config.suites[name].goldens,
        records=frozen,
        content_hash=content_hash(frozen),
    )


def score_predictions_on_dask(
    config: Config, name: str, scoring: SuiteScoring[T], progress: ProgressReporter | None = None
) -> T:
    """Read, join and score a predictions suite on the cluster (see the module's steps).

    ``scoring`` creates the suite's metrics and makes the scored suite of what was computed;
    ``progress`` counts the examples of each partition as its statistics arrive."""
    from goldgate.execution.pool import stack_parts
    from goldgate.metrics.batch import BatchMetric
    from goldgate.metrics.engine import MetricComputeError
    from goldgate.systems.predictions import PREDICTION_FIELDS
    from goldgate.terminal.progress import NullProgress

    system = config.system_for(name)
    golden_location = config.suites[name].goldens_location
    location = system.predictions_location(name, config.root)
    client = _client(config, name, golden_location)
    goldens, golden_ids = _read_goldens(client, config, name)
    futures: list[Any] = list(goldens.futures)
    shown = progress or NullProgress()
    started = False
    try:
        _unique(goldens, golden_ids, GoldenSetError)
        predictions = _read(
            client,
            location,
            InputError,
            "predictions file",
            _prediction_part,
            system.samples,
            columns=PREDICTION_FIELDS,
        )
        futures += predictions.futures
        prediction_ids = [
            _result(client.submit(_prediction_ids, part), config) for part in predictions.futures
        ]
        holder = _unique(predictions, prediction_ids, InputError)
        _check_join(golden_location, location, golden_ids, predictions, prediction_ids, holder)

        metrics = scoring.metrics()
        # Batch metrics need inputs, ids and a context: they are scored here, in one pass.
        on_workers = not any(isinstance(metric, BatchMetric) for metric in metrics.values())
        pairs = list(metrics.items()) if on_workers else []
        keep_lines = len(goldens.futures) == 1
        pieces = _shuffle(client, predictions.futures, prediction_ids, golden_ids)
        futures += [piece for by_part in pieces.values() for piece in by_part.values()]
        scored = [
            client.submit(
                _score_part,
                pairs,
                part,
                keep_lines,
                system.samples,
                *[pieces[index][source] for source in sorted(pieces[index])],
                pure=False,
            )
            for index, part in enumerate(goldens.futures)
        ]
        # The joins hold what they need: each partition is dropped once its joins have run.
        for future in futures:
            future.release()
        futures = scored
        total = sum(len(part_ids) for part_ids, _ in golden_ids)
        files = f"{len(scored)} file{'s' if len(scored) != 1 else ''}"
        shown.start(total, f"{name}: scoring {files} on Dask")
        started = True
        records: list[GoldenRecord] = []
        outputs: dict[str, list[str]] = {}
        parts: list[list[list[FloatArray]]] = []
        for future in scored:
            part_records, part_outputs, stats, failure = _result(future, config)
            if failure is not None:
                sample, spec, index, problem = failure
                failed = part_records[index].id
                raise _metric_error(name, spec, problem, failed, sample, system.samples)
            records += part_records
            outputs.update(
                (record.id, outs) for record, outs in zip(part_records, part_outputs, strict=True)
            )
            parts.append(stats)
            future.release()
            shown.advance(len(part_records))
    finally:
        if started:
            shown.finish()
        client.cancel(futures)
    golden = _golden_set(config, name, records)
    if not on_workers:
        return scoring.from_outputs(golden, outputs, metrics)
    per_sample = []
    for sample in range(system.samples):
        try:
            per_sample.append(stack_parts(pairs, (part[sample] for part in parts), len(records)))
        except MetricComputeError as exc:  # a sum that overflows only over the whole set
            failed = records[exc.index].id
            raise _metric_error(
                name, exc.spec, exc.problem, failed, sample, system.samples
            ) from None
    return scoring.from_arrays(golden, outputs, pairs, per_sample)


def _split_part(part: list[_Prediction], destinations: list[int]) -> dict[int, list[_Prediction]]:
    """On a worker: a prediction partition's rows grouped by the golden partition they join."""
    groups: dict[int, list[_Prediction]] = {}
    for item, destination in zip(part, destinations, strict=True):
        groups.setdefault(destination, []).append(item)
    return groups


def _shuffle(
    client: Any, futures: list[Any], prediction_ids: list[_Ids], golden_ids: list[_Ids]
) -> dict[int, dict[int, Any]]:
    """golden partition → prediction partition → a future of the rows that join there.

    Each prediction partition is split on its worker by destination (from the ids known
    here), so each golden partition receives only its own predictions: what moves between
    workers is the predictions once, however the files are split.
    """
    import operator

    golden_of = {record_id: index for index, (ids, _) in enumerate(golden_ids) for record_id in ids}
    pieces: dict[int, dict[int, Any]] = {index: {} for index in range(len(golden_ids))}
    for source, (future, (ids, _)) in enumerate(zip(futures, prediction_ids, strict=True)):
        destinations = [golden_of[record_id] for record_id in ids]
        groups = client.submit(_split_part, future, destinations)
        for destination in sorted(set(destinations)):
            pieces[destination][source] = client.submit(operator.getitem, groups, destination)
        groups.release()  # its pieces depend on it; this process needs only them
    return pieces


def _metric_error(
    name: str, spec: str, problem: str, record_id: str, sample: int, samples: int
) -> MetricError:
    where = f", sample {sample}" if samples > 1 else ""
    return MetricError(f"metric {spec!r}: {problem} (suite {name!r}, id {record_id!r}{where})")


def _check_join(
    golden_location: str,
    location: str,
    golden_ids: list[_Ids],
    predictions: _Partitions,
    prediction_ids: list[_Ids],
    holder: dict[str, int],
) -> None:
    """Every golden id has a prediction and every prediction a golden id (read_predictions')."""
    expected = {record_id for part_ids, _ in golden_ids for record_id in part_ids}
    unknown = [
        f"{record_id!r} ({predictions.labels[index]}:{line})"
        for index, (part_ids, lines) in enumerate(prediction_ids)
        for record_id, line in zip(part_ids, lines, strict=True)
        if record_id not in expected
    ]
    if unknown:
        raise SystemRunError(
            f"{location}: {len(unknown)} id(s) not in the golden set {golden_location}:"
            f" {first_of(unknown, SHOWN_IDS)}"
        )
    missing = [
        repr(record_id)
        for part_ids, _ in golden_ids
        for record_id in part_ids
        if record_id not in holder
    ]
    if missing:
        raise SystemRunError(
            f"{location}: no output for {len(missing)} of {len(expected)} golden id(s): "
            f"{first_of(missing, SHOWN_IDS)}"
        )
