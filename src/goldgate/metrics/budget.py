"""A run's cost budget: what calls that report a cost (``llm_judge``) may spend in one run.

``budget: {max_usd: 5.00}`` in the configuration. The runner opens a :class:`Budget` for
the run (:func:`spending`); a metric that pays per call asks it, before each call, to
:meth:`~Budget.reserve` the call's estimated cost, and :meth:`~Budget.settle`\\ s the real
cost when the reply comes. A call whose estimate would take the spend (calls made, plus calls
in flight) past ``max_usd`` is not made: :class:`BudgetExceeded` (exit 2) says what was spent
and what remained. Whatever was obtained before the stop is already cached (judgments are
written as they arrive), so a run with a larger budget pays only for the rest.

The budget is the run's, not a suite's: one pull request's spend, whatever the suites.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from goldgate.errors import GoldgateError

#: why a suite after the one that stopped on the budget was not run
NOT_RUN_ON_BUDGET = "the budget was exhausted by an earlier suite (budget.max_usd)"
#: a spend this close to the budget is within it (float sums of prices)
EPSILON = 1e-12


class BudgetExceeded(GoldgateError):
    """The next call would take the run's spend past ``budget.max_usd`` (exit 2)."""


class Budget:
    """The run's spend against ``max_usd``, shared by every suite and thread of the run."""

    def __init__(self, max_usd: float) -> None:
        self.max_usd = max_usd
        #: what the calls that came back cost
        self.spent = 0.0
        #: the estimates of the calls in flight
        self.reserved = 0.0
        #: calls paid for
        self.calls = 0
        #: a call was refused: the run stopped on the budget
        self.stopped = False
        #: the estimate of the call refused first, and what it was for
        self.refused: tuple[float, str] | None = None
        self._lock = threading.Lock()

    def reserve(self, estimate: float, what: str) -> None:
        """Book ``estimate`` for a call about to be made; :class:`BudgetExceeded` (nothing
        booked) when it would take the spend past the budget."""
        with self._lock:
            if self.stopped or self.spent + self.reserved + estimate > self.max_usd + EPSILON:
                if not self.stopped:
                    self.stopped = True
                    self.refused = (estimate, what)
                raise BudgetExceeded(self.message())
            self.reserved += estimate

    def settle(self, estimate: float, cost: float) -> None:
        """The call booked at ``estimate`` came back and cost ``cost``."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - estimate)
            self.spent += cost
            self.calls += 1

    def release(self, estimate: float) -> None:
        """The call booked at ``estimate`` failed: nothing was obtained, nothing counted."""
        with self._lock:
            self.reserved = max(0.0, self.reserved - estimate)

    def message(self) -> str:
        """What was spent and what remained, and why the run stopped."""
        left = max(0.0, self.max_usd - self.spent)
        text = (
            f"budget exhausted: spent ${self.spent:,.4f} of budget.max_usd ${self.max_usd:,.2f}"
            f" on {self.calls:,} call{'s' if self.calls != 1 else ''}, ${left:,.4f} left"
        )
        if self.refused is not None:
            estimate, what = self.refused
            text += f"; the next call ({what}) was estimated at ${estimate:,.4f}"
        return (
            text + "; what was obtained is cached: run again with a larger budget.max_usd to pay"
            " only for the rest"
        )


_CURRENT: ContextVar[Budget | None] = ContextVar("goldgate_budget", default=None)


def current_budget() -> Budget | None:
    """The budget of the run in progress (None: no budget, or no run)."""
    return _CURRENT.get()


@contextmanager
def spending(budget: Budget | None) -> Iterator[Budget | None]:
    """Make ``budget`` the one calls made inside this block book against."""
    token = _CURRENT.set(budget)
    try:
        yield budget
    finally:
        _CURRENT.reset(token)
