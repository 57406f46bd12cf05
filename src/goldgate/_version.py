"""goldgate's version: a leaf module, so that metrics, config and runner can import it without
importing the package root (whose lazy names lead back to them)."""

from __future__ import annotations

__version__ = "0.1.0"
