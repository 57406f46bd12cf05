"""Safe input and output: bounded reads, YAML, Parquet, atomic writes, git, user code."""
