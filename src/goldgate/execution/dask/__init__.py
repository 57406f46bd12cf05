"""The Dask backend: the only package that imports dask and distributed."""
