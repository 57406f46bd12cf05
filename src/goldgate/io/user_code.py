"""Where a user's own ``module:function`` metrics and systems are imported from.

Kept apart from ``config`` (which imports pydantic) so that ``goldgate score`` can put the
working directory on ``sys.path`` without paying for the configuration's models.
"""

from __future__ import annotations

import sys
from pathlib import Path


def importable_from(root: Path) -> None:
    """Put ``root`` on ``sys.path`` (as pytest's rootdir is), so ``module:function`` metrics
    and systems in the user's repository import when goldgate runs as an installed command."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
