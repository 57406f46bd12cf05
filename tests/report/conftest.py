"""Fixtures of the report tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.report.browser import ARGS, CHROMIUM, require_browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield instance
        finally:
            instance.close()
