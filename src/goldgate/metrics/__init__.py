"""goldgate's metrics: one metric family a module, each a ``Metric`` from ``base``.

Importing the package imports no metric (nor NumPy): ``registry`` finds them by name.
"""

from __future__ import annotations

from typing import Final

#: Below this many examples one process is faster than starting a pool (measured on 2 cores:
#: a worker costs ~0.3 s to start and import the metrics, while BLEU+chrF+ROUGE-1/2/L+EM+F1
#: take ~19 µs of CPU an example, so two workers save that 0.3 s from ~30,000 examples on).
#: Here, not in ``parallel``, so that help texts can quote it without importing NumPy.
PARALLEL_MIN_EXAMPLES: Final = 30_000
