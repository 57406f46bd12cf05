"""Outputs a bless already has, so that the system is not called again for them: the blessed
outputs ``bless --new-only`` keeps, and the outputs of the run just reviewed (its
``result.json``) when they stand for today's system, golden set and metrics.

Its interface: :func:`kept_outputs`, :func:`reviewed_result` and :func:`reviewed_outputs`;
the bless hands what they find to :func:`~goldgate.pipeline.score.score_suite` as ``known``.
"""

from __future__ import annotations

from dataclasses import dataclass

from goldgate.errors import BaselineError, GoldgateError
from goldgate.model.baseline import SuiteBaseline
from goldgate.model.config import Config
from goldgate.model.result import RunResult
from goldgate.pipeline.compare import example_digests
from goldgate.pipeline.plan import load_suite_goldens, own_files
from goldgate.pipeline.record import RESULT_FILENAME


def reviewed_result(config: Config) -> RunResult | None:
    """The last result written to the report directory, when there is a readable one."""
    path = config.report.dir / RESULT_FILENAME
    if not path.is_file():
        return None
    try:
        return RunResult.from_json_file(path)
    except GoldgateError:
        return None


@dataclass(frozen=True)
class ReviewedOutputs:
    """A suite's outputs in the reviewed run, and what scoring them records of where they
    came from."""

    #: example id -> its output (one sample)
    outputs: dict[str, list[str]]
    #: when the reviewed run was made
    since: str
    #: the digest of the system's identity, the same as the reviewed run's
    identity: str


def reviewed_outputs(
    config: Config, name: str, reviewed: RunResult | None
) -> ReviewedOutputs | None:
    """Suite ``name``'s outputs in the reviewed run, when they stand for today's (the same
    golden set, system identity with its code fingerprint, metric signatures, one sample and
    every example); None when the system must be called."""
    from goldgate.systems.cache import identity_digest
    from goldgate.systems.obtain import system_identity

    system = config.system_for(name)
    previous = next((s for s in (reviewed.suites if reviewed else []) if s.name == name), None)
    if previous is None or previous.system is None or system.kind == "predictions":
        return None
    suite = config.suites[name]
    golden = load_suite_goldens(config, name)
    counts = golden.reference_counts()
    signatures = {
        spec: str(metric.signature(counts)) for spec, metric in suite.create_metrics().items()
    }
    outputs = {example.id: [example.output] for example in previous.examples}
    _, identity = system_identity(system, root=config.root, ignore=own_files(config))
    digest = identity_digest(identity)
    if (
        previous.error is None
        and system.samples == 1
        and previous.golden_hash == golden.content_hash
        and previous.system == digest
        and {m.metric: m.signature for m in previous.metrics} == signatures
        and len(outputs) == len(golden)
        and all(example_id in outputs for example_id in golden.ids())
    ):
        assert reviewed is not None  # previous came from it
        return ReviewedOutputs(outputs, since=reviewed.created_at, identity=digest)
    return None


def kept_outputs(config: Config, name: str, old: SuiteBaseline) -> dict[str, list[str]]:
    """The blessed outputs ``bless --new-only`` keeps; an edited example is refused first."""
    golden = load_suite_goldens(config, name)
    digests = example_digests(golden)
    blessed_digests = old.digests()
    for example_id, digest in digests.items():
        blessed = blessed_digests.get(example_id)
        if blessed is not None and blessed != digest:
            raise BaselineError(
                f"suite {name!r}, example {example_id!r}: changed since it was blessed (input,"
                " references or tags); run `goldgate bless` (without --new-only) to accept"
                " every score again"
            )
    return {
        example_id: list(old.outputs_of(example_id) or [])
        for example_id in digests
        if example_id in blessed_digests
    }
