"""The data goldgate reads and writes: configuration, golden sets, baseline, result."""
