"""``python -m goldgate``: the ``goldgate`` command, for where its script is not on PATH."""

from goldgate.cli.main import main

if __name__ == "__main__":
    raise SystemExit(main())
