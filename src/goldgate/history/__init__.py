"""The run history: an embedded SQLite store of every run, and the blessed timeline from git."""
