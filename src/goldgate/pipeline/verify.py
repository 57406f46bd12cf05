"""The verify stage of ``goldgate check``: golden sets and the baseline against the
configuration, no system run.

Its interface: :func:`check_suite` (one suite against its baseline entry → a
:class:`SuiteCheck`). A packed suite whose golden set file is the blessed one, or changed in
one region, is settled from the file's hash and index without reading every record
(:func:`_check_by_index`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from goldgate.errors import BaselineError, GoldgateError
from goldgate.gate.golden_change import describe_against
from goldgate.model.baseline import SuiteBaseline, blessed_nrefs
from goldgate.model.baseline_verify import verify_scores, verify_suite
from goldgate.model.config import Config
from goldgate.model.golden_formats import golden_format
from goldgate.model.golden_index import FileComparison, compare_records
from goldgate.model.goldens import golden_file_hash, is_dataset
from goldgate.model.packed import PackError
from goldgate.pipeline.compare import example_digests
from goldgate.pipeline.plan import load_suite_goldens
from goldgate.pipeline.score import create_suite_metrics


@dataclass(frozen=True)
class SuiteCheck:
    """What ``check`` found for one suite."""

    suite: str
    n_examples: int
    #: the golden set's content hash; None when ``check`` counted a change from the region of
    #: the file that changed, without reading every record (see golden_file_index)
    golden_hash: str | None
    #: None when the suite agrees with the baseline (or has none yet); else the problem
    error: str | None = None
    in_baseline: bool = False
    #: how the golden set changed since the baseline, when it did (compared on the shared part)
    note: str | None = None
    #: configured metrics the baseline has no score of yet (nothing to compare them with)
    unblessed: tuple[str, ...] = ()
    #: what is valid but probably not meant: a must_pass rule selecting no example, say
    warnings: tuple[str, ...] = ()


def check_suite(config: Config, name: str, blessed: SuiteBaseline | None, label: str) -> SuiteCheck:
    """What ``check`` finds for suite ``name`` against its baseline entry ``blessed`` (None
    when it has none yet; ``label`` names the baseline): a problem is the ``error`` it
    reports, never raised; what is valid but likely a mistake, its ``warnings``."""
    found = _check_suite(config, name, blessed, label)
    if found.error is not None:
        return found
    try:
        warnings = tuple(_warnings(config, name))
    except GoldgateError as exc:
        return SuiteCheck(name, 0, "", str(exc))
    return replace(found, warnings=warnings) if warnings else found


def _warnings(config: Config, name: str) -> list[str]:
    """Must-pass rules that select nothing or name missing ids; a confirm that cannot re-run."""
    from goldgate.gate.must_pass import missing_ids, selected_positions
    from goldgate.model.golden_records import record_tags

    found: list[str] = []
    suite = config.suites[name]
    if config.confirm is not None and config.system_for(name).kind == "predictions":
        found.append(
            f"suite {name!r}: confirm is set, but its system is a predictions file, which"
            " cannot be re-run: its failing checks will stand unconfirmed"
        )
    if config.budget is not None:
        for spec, options in suite.metrics.items():
            prices = ("price_input_per_mtok", "price_output_per_mtok")
            if spec == "llm_judge" and not any(options.get(price) for price in prices):
                found.append(
                    f"suite {name!r}: budget is set, but llm_judge has no prices"
                    " (price_input_per_mtok, price_output_per_mtok): its calls count as free"
                )
    if not suite.must_pass:
        return found
    golden = load_suite_goldens(config, name)
    ids = golden.ids()
    tags = list(record_tags(golden.records))
    for rule in suite.must_pass:
        if not selected_positions(rule, ids, tags):
            found.append(f"suite {name!r}: must_pass {rule.describe()} selects no example")
        gone = missing_ids(rule, ids)
        if gone:
            found.append(
                f"suite {name!r}: must_pass {rule.describe()} names ids the golden set does"
                f" not hold: {', '.join(gone)}"
            )
    return found


def _check_suite(
    config: Config, name: str, blessed: SuiteBaseline | None, label: str
) -> SuiteCheck:
    try:
        if blessed is not None:
            _check_outputs(blessed, name, label)
        unblessed = (
            tuple(spec for spec in config.suites[name].metrics if spec not in blessed.metrics)
            if blessed is not None
            else ()
        )
        quick = _check_by_index(config, name, blessed, label)
        if quick is not None:
            return replace(quick, unblessed=unblessed)
        golden = load_suite_goldens(config, name)
        metrics = create_suite_metrics(config, name)
        counts = golden.reference_counts()
        signatures = {spec: str(metric.signature(counts)) for spec, metric in metrics.items()}
        note = None
        if blessed is not None:
            if blessed.golden_hash != golden.content_hash and config.on_golden_change == "compare":
                note = describe_against(
                    blessed,
                    digests=example_digests(golden),
                    signatures=signatures,
                    suite=name,
                    source=label,
                )
            else:
                verify_suite(
                    blessed,
                    suite=name,
                    golden_hash=golden.content_hash,
                    signatures=signatures,
                    source=label,
                    digests=example_digests(golden),
                )
            # the blessed scores must follow from the blessed statistics
            verify_scores(blessed, metrics, signatures=signatures, suite=name, source=label)
        return SuiteCheck(
            name,
            len(golden),
            golden.content_hash,
            None,
            blessed is not None,
            note,
            unblessed,
        )
    except GoldgateError as exc:
        return SuiteCheck(name, 0, "", str(exc))


def _check_outputs(blessed: SuiteBaseline, name: str, label: str) -> None:
    """Refuse a packed suite's outputs block of the wrong number of examples or samples, as
    a run's reports do when they decode it."""
    try:
        blessed.check_outputs()
    except PackError as exc:
        raise BaselineError(
            f"{label}: damaged baseline: suite {name!r}: {exc}; restore it from git or run"
            " `goldgate bless` again"
        ) from None


def _check_by_index(
    config: Config, name: str, blessed: SuiteBaseline | None, label: str
) -> SuiteCheck | None:
    """``check`` of a packed suite from the blessed golden set file's hash and index, reading
    at most the region of the file that changed; None when they do not settle it and every
    record must be read.

    The same bytes read by the same rules are the same records: the blessed signatures carry
    goldgate's version, so a baseline of another version (other rules) fails as it would.
    Only a packed suite is taken on trust: its ids and digests were checked against their
    blocks' SHA-256 when the baseline was read, where an edited digest of an unpacked suite
    would only show against the records (and an unpacked suite is small enough to read).
    """
    location = config.suites[name].goldens_location
    if (
        blessed is None
        or blessed.packed is None
        or blessed.golden_file_hash is None
        # the file hash and index are trusted only when bound to the packed blocks (checked
        # as the baseline was read): a baseline merged hunk by hunk from two blesses could
        # pair one bless's hash with another's examples. Older baselines read the records.
        or blessed.binding is None
        or is_dataset(location)
    ):
        return None
    nrefs = blessed_nrefs(blessed)
    path = config.suites[name].goldens
    if nrefs is None:
        return None
    # The same bytes are the same records only when read by the same reader: a file renamed
    # from .jsonl to .csv (or .json) holds other records, or none, in the blessed bytes.
    reader = golden_format(path.name)
    if reader is None or reader != golden_format(blessed.goldens):
        return None
    if golden_file_hash(path) == blessed.golden_file_hash:
        return _check_unchanged(config, name, blessed, nrefs, label)
    chunks = blessed.golden_file_chunks
    compared = compare_records(path, chunks) if chunks is not None else None
    if compared is None:
        return None
    if compared.same:
        return _check_unchanged(config, name, blessed, nrefs, label)
    if config.on_golden_change != "compare":  # the error names the new content hash
        return None
    return _check_edited(config, name, blessed, nrefs, compared, label)


def _check_unchanged(
    config: Config, name: str, blessed: SuiteBaseline, nrefs: str, label: str
) -> SuiteCheck:
    """``check`` of a suite whose golden set file holds the blessed records: the metrics'
    signatures and the blessed scores are checked, the records need not be read."""
    metrics = create_suite_metrics(config, name)
    signatures = {spec: str(metric.signature(nrefs=nrefs)) for spec, metric in metrics.items()}
    verify_suite(
        blessed, suite=name, golden_hash=blessed.golden_hash, signatures=signatures, source=label
    )
    verify_scores(blessed, metrics, signatures=signatures, suite=name, source=label)
    return SuiteCheck(name, blessed.n_examples, blessed.golden_hash, None, True)


def _check_edited(
    config: Config,
    name: str,
    blessed: SuiteBaseline,
    nrefs: str,
    compared: FileComparison,
    label: str,
) -> SuiteCheck | None:
    """``check`` of a suite whose golden set file changed in one region: its records and the
    blessed digests of the pieces found around it tell what was added, edited and removed,
    as reading every record would (None when they cannot: an id twice, say, or the region
    holds the examples it replaced, where only the content hash tells whether the set is
    the blessed one)."""
    blessed_raw = blessed.digest_bytes()
    now = compared.nrefs(nrefs)
    if blessed_raw is None or now is None:
        return None
    digests = compared.digests(blessed.example_ids(), blessed_raw)
    if digests is None:
        return None
    metrics = create_suite_metrics(config, name)
    signatures = {spec: str(metric.signature(nrefs=now)) for spec, metric in metrics.items()}
    note = describe_against(
        blessed, digests=digests, signatures=signatures, suite=name, source=label
    )
    verify_scores(blessed, metrics, signatures=signatures, suite=name, source=label)
    return SuiteCheck(name, len(digests), None, None, True, note)
