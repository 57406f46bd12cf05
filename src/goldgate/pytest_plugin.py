"""goldgate's pytest plugin (registered through the ``pytest11`` entry point)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare goldgate's command-line options."""
    group = parser.getgroup("goldgate", "text-generation quality gate")
    group.addoption(
        "--goldgate",
        action="store_true",
        default=False,
        help="collect the configured goldgate suites' gate checks as test items",
    )
