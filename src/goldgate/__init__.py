"""goldgate: a regression gate for text-generation quality."""

from __future__ import annotations

__version__ = "0.1.0"
