"""Obtain a system's outputs for a golden set: a predictions file, a command or a callable.

The entry points: :func:`obtain_outputs` and :func:`collect_outputs` take outputs from the
cache where it has them and ask the system for the rest (:mod:`goldgate.systems.predictions`,
:mod:`goldgate.systems.command`, :mod:`goldgate.systems.callable`); :func:`system_identity`
says which code and settings the outputs stand for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldgate.errors import SystemRunError
from goldgate.execution.backend import Backend, CallableWork
from goldgate.model.config import SystemConfig
from goldgate.model.goldens import GoldenSet
from goldgate.systems.cache import (
    OutputCache,
    StaleCache,
    canonical_json,
    identity_digest,
    input_hash,
)
from goldgate.systems.callable import (
    _call_error,
    _checked_output,
    _timeout_error,
    guard_os_exit,
    load_callable,
    run_callable,
)
from goldgate.systems.calls import Call, Deliver, _ids
from goldgate.systems.command import run_command
from goldgate.systems.fingerprint import code_fingerprint
from goldgate.systems.predictions import read_predictions
from goldgate.terminal.progress import NullProgress, ProgressReporter


@dataclass(frozen=True)
class Obtained:
    """A system's outputs and how many of them came from the cache instead of the system."""

    outputs: dict[str, list[str]]
    total: int = 0
    resumed: int = 0
    #: when the resumed outputs were first cached (ISO 8601)
    since: str | None = None
    cache_path: Path | None = None
    #: an unfinished cache of the same system under other code, set aside
    stale: StaleCache | None = None
    #: digest of the system's identity (settings, code fingerprint, cache_key); None for files
    identity: str | None = None
    #: a warning naming the predictions left out: ids the golden set does not have
    ignored: str | None = None


def obtain_outputs(
    system: SystemConfig,
    golden: GoldenSet,
    *,
    root: Path,
    cache_dir: Path,
    progress: ProgressReporter | None = None,
    backend: Backend | None = None,
) -> dict[str, list[str]]:
    """Outputs of ``system`` for every record: id → ``system.samples`` outputs.

    ``backend`` makes a callable's calls (None: in this process).
    """
    return collect_outputs(
        system, golden, root=root, cache_dir=cache_dir, progress=progress, backend=backend
    ).outputs


def collect_outputs(
    system: SystemConfig,
    golden: GoldenSet,
    *,
    root: Path,
    cache_dir: Path,
    progress: ProgressReporter | None = None,
    ignore: Sequence[Path] = (),
    backend: Backend | None = None,
) -> Obtained:
    """Outputs of ``system`` for every record, and what the cache gave of them.

    ``ignore`` lists files whose changes do not change the system (goldgate's own: the
    configuration, golden sets, baseline, reports), left out of its code fingerprint.
    ``backend`` makes a callable's calls (None: in this process); a command runs here.
    """
    if system.kind == "predictions":
        ignored: list[str] = []
        found = read_predictions(
            system.predictions_path(golden.suite, root),
            golden,
            samples=system.samples,
            strict=system.strict,
            ignored=ignored,
        )
        return Obtained(found, ignored=ignored[0] if ignored else None)
    progress = progress or NullProgress()
    function, identity = system_identity(
        system, root=root, ignore=[cache_dir, golden.path, *ignore]
    )
    cache = OutputCache(cache_dir, golden.suite, identity, mode=system.cache)
    outputs: dict[str, list[str | None]] = {i: [None] * system.samples for i in golden.ids()}
    calls: list[Call] = []
    for record in golden.records:
        digest = input_hash(record.input)
        for sample in range(system.samples):
            key = (record.id, digest, sample)
            cached = cache.get(key)
            if cached is None:
                calls.append(Call(record, sample, key))
            else:
                outputs[record.id][sample] = cached

    def deliver(call: Call, output: str) -> None:
        cache.put(call.key, output)
        outputs[call.record.id][call.sample] = output
        progress.advance()

    total = len(golden.records) * system.samples
    resumed = total - len(calls)
    label = f"{golden.suite}: {system.kind}"
    if resumed:
        label += f" ({resumed} resumed from the cache of {cache.since or 'an earlier run'})"
    progress.start(total, label)
    progress.advance(resumed)
    try:
        if calls and function is not None:
            _run_callable_calls(function, system, calls, deliver, root=root, backend=backend)
        elif calls:
            run_command(system, calls, deliver, suite=golden.suite, root=root)
    finally:
        progress.finish()
        cache.close()
    missing = [record_id for record_id, values in outputs.items() if None in values]
    if missing:  # every path above raises first; this guards the contract
        raise SystemRunError(f"suite {golden.suite!r}: no output for {_ids(missing)}")
    cache.complete()
    return Obtained(
        outputs={
            record_id: [v for v in values if v is not None] for record_id, values in outputs.items()
        },
        total=total,
        resumed=resumed,
        since=cache.since if resumed else None,
        cache_path=cache.path if system.cache != "off" else None,
        stale=cache.stale,
        identity=identity_digest(identity),
    )


def _run_callable_calls(
    function: Callable[..., Any],
    system: SystemConfig,
    calls: Sequence[Call],
    deliver: Deliver,
    *,
    root: Path,
    backend: Backend | None,
) -> None:
    """A callable's calls made by ``backend`` (None: in this process), each output delivered."""
    if backend is None:
        from goldgate.execution.local import InProcessBackend

        backend = InProcessBackend()

    def here() -> None:
        with guard_os_exit():
            run_callable(function, calls, deliver, system=system)

    backend.run_calls(
        CallableWork(
            system=system,
            calls=calls,
            deliver=deliver,
            root=root,
            here=here,
            checked=_checked_output,
            call_error=_call_error,
            timeout_error=_timeout_error,
        )
    )


def system_identity(
    system: SystemConfig, *, root: Path, ignore: Sequence[Path] = ()
) -> tuple[Callable[..., Any] | None, dict[str, Any]]:
    """A command or callable (imported) and its identity: settings, code fingerprint, key.

    Two runs with the same identity run the same code on the same settings, so one's
    outputs may stand for the other's: the cache and ``bless`` reusing a reviewed run rely
    on it. ``ignore`` lists files left out of the code fingerprint.
    """
    function: Callable[..., Any] | None = None
    if system.kind == "callable":
        with guard_os_exit():  # also while importing: ``from os import _exit`` gets the guard
            function, identity = load_callable(system, root)
    else:
        identity = command_identity(system)
    identity["code"] = code_fingerprint(
        root, argv=system.argv() if system.command is not None else (), exclude=ignore
    )
    if system.cache_key is not None:
        identity["cache_key"] = system.cache_key
    return function, identity


def command_identity(system: SystemConfig) -> dict[str, Any]:
    """What makes a command the same system for the cache (env values hashed: secrets)."""
    env = canonical_json(dict(sorted(system.env.items()))).encode("utf-8")
    return {
        "kind": "command",
        "argv": system.argv(),
        "env_keys": sorted(system.env),
        "env_sha256": hashlib.sha256(env).hexdigest(),
    }
