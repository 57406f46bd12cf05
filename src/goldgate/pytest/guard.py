"""Keeps a goldgate-marked test from passing unchecked when goldgate's plugin is disabled.

A test marked ``@pytest.mark.goldgate(suite=...)`` passes on its body alone when nothing
checks its suite: under ``-p no:goldgate`` it would report a gate it never checked. This
tiny plugin has an entry point of its own (``goldgate_guard``), so it is still loaded then,
and such a test errors in its setup with a message saying why. ``-p no:goldgate_guard``
turns it off too; ``-m "not goldgate"`` deselects the marked tests. It imports nothing of
goldgate, so loading it costs nothing in a run that does not use goldgate.
"""

from __future__ import annotations

import pytest

#: the name of goldgate's plugin (its ``pytest11`` entry point) and of its marker
PLUGIN = "goldgate"
MARKER = "goldgate"


def pytest_configure(config: pytest.Config) -> None:
    """When goldgate's plugin is not loaded, declare its marker and guard marked tests."""
    if config.pluginmanager.hasplugin(PLUGIN):
        return
    config.addinivalue_line(
        "markers",
        f"{MARKER}(suite, ...): a goldgate gate check; goldgate's plugin is disabled, so a"
        " test marked with it errors instead of passing unchecked",
    )
    config.pluginmanager.register(DisabledGuard(), "goldgate-disabled-guard")


class DisabledGuard:
    """Registered only when goldgate's plugin is disabled (``-p no:goldgate``)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Error a marked test before its body runs: its gate cannot be checked."""
        if item.get_closest_marker(MARKER) is not None:
            pytest.fail(
                f"{item.nodeid} is marked @pytest.mark.{MARKER}, but goldgate's pytest plugin"
                f" is disabled (-p no:{PLUGIN}), so its gate would not be checked: enable the"
                f' plugin, or deselect such tests with -m "not {MARKER}"',
                pytrace=False,
            )
