"""Which execution backend runs a run's work, picked from the configuration's ``engine``.

``engine.dask`` set: the Dask cluster; else ``engine.jobs: 1``: this process; else a pool of
``jobs`` processes (``jobs`` unset: every core once a corpus is large enough to pay for
starting them, see :func:`goldgate.execution.pool.resolve_jobs`). The configuration says what
the user chose; this module says which implementation that is.

Each backend is named by ``module:attribute`` and imported only when chosen: the Dask backend's
package is the only one that imports ``dask`` and ``distributed``, and nothing else imports
that package. A test may put another class under a kind (:data:`BACKENDS`) to see what the
pipeline asks of its backend.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from goldgate.execution.backend import Backend
    from goldgate.model.config import DaskConfig, EngineConfig

BackendKind = Literal["in-process", "pool", "dask"]

#: each kind of backend → its class, ``module:attribute``; called with ``jobs=`` and ``dask=``
BACKENDS: dict[BackendKind, str] = {
    "in-process": "goldgate.execution.local:InProcessBackend",
    "pool": "goldgate.execution.local:PoolBackend",
    "dask": "goldgate.execution.dask.backend:DaskBackend",
}


def backend_kind(*, jobs: int | None, dask: DaskConfig | str | None) -> BackendKind:
    """The kind of backend for these engine settings."""
    if dask is not None:
        return "dask"
    return "in-process" if jobs == 1 else "pool"


def select_backend(*, jobs: int | None = None, dask: DaskConfig | str | None = None) -> Backend:
    """The backend for ``jobs`` processes here, or for the Dask cluster at ``dask`` (its
    configuration, its scheduler address or ``local``)."""
    module_name, _, attribute = BACKENDS[backend_kind(jobs=jobs, dask=dask)].partition(":")
    factory = getattr(importlib.import_module(module_name), attribute)
    backend: Backend = factory(jobs=jobs, dask=dask)
    return backend


def backend_for(engine: EngineConfig) -> Backend:
    """The backend the configuration's ``engine`` asks for."""
    return select_backend(jobs=engine.jobs, dask=engine.dask)
