"""Transitions between the blessed and the current side, per category: how many blessed
outputs had it, how many current ones have it, how many examples newly have it, and how many
of the regressed examples newly have it. Bit arithmetic over the sides' masks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from goldgate.diagnosis.sides import Masks, SideMasks
from goldgate.model.diagnosis import CategoryCounts

Flags = npt.NDArray[np.bool_]


def newly(masks: SideMasks) -> Masks:
    """Per example, the modes its current output has and its blessed output had not (0 for
    an example without a blessed output: nothing to compare)."""
    fresh: Masks = masks.current & ~masks.baseline
    fresh[~masks.has_baseline] = 0
    return fresh


def bit_counts(values: Masks, width: int) -> list[int]:
    """How many of ``values`` have each of the first ``width`` bits set."""
    return [int(np.count_nonzero(values >> np.uint64(bit) & np.uint64(1))) for bit in range(width)]


def category_counts(
    names: Sequence[str],
    masks: SideMasks,
    regressed: Flags | None,
    *,
    baseline_diagnosed: bool,
) -> dict[str, CategoryCounts]:
    """Every category's counts, in detector order; ``regressed`` marks the regressed examples
    (None when nothing could regress: no baseline scores)."""
    width = len(names)
    current = bit_counts(masks.current, width)
    if not baseline_diagnosed:
        return {
            name: CategoryCounts(baseline=None, current=current[bit], new=None, regressed=None)
            for bit, name in enumerate(names)
        }
    fresh = newly(masks)
    blessed = bit_counts(masks.baseline[masks.has_baseline], width)
    new = bit_counts(fresh, width)
    among = bit_counts(fresh[regressed], width) if regressed is not None else None
    return {
        name: CategoryCounts(
            baseline=blessed[bit],
            current=current[bit],
            new=new[bit],
            regressed=among[bit] if among is not None else None,
        )
        for bit, name in enumerate(names)
    }
