"""Where the real evaluation data lies: ``../shared/data`` beside the repository, if at all."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
