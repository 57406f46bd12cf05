"""Obtain outputs: predictions files, commands and callables, and the output cache."""
