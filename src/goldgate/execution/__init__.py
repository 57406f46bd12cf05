"""Execution backends: where scoring and callable systems run (in-process, process pool, Dask)."""
