"""The command line: the parser (main) and one module per command."""
