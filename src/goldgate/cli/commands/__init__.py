"""One module per goldgate command; cli.py wires them."""
