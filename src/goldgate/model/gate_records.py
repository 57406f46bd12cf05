"""What the result records of the rules beside the statistical gate: must-pass examples, the
confirmation of a failing check by re-running the system, and the run's spend against its
budget.

Each is optional in the result and left out of its JSON when unset, so a result of a run
without these rules reads as it always did.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MustPassExample(_Model):
    """One example a must-pass rule selected, and whether it passed on its own."""

    id: str = Field(description="the example's id")
    score: float = Field(description="the example's score (the mean over samples), 0-100")
    passed: bool = Field(description="whether the score met the rule's threshold")
    outputs: list[str] | None = Field(
        default=None, description="a failing example's output (one per sample)"
    )
    references: list[str] | None = Field(default=None, description="a failing example's references")


class MustPassOutcome(_Model):
    """The examples one must-pass rule selected (its check is ``rule: must_pass``)."""

    selection: str = Field(description="what the rule selects: 'tag=critical', 'ids=a,b'")
    examples: list[MustPassExample] = Field(
        default_factory=list, description="every selected example, in golden order"
    )

    @property
    def failing(self) -> list[MustPassExample]:
        """The selected examples that did not pass."""
        return [example for example in self.examples if not example.passed]


class RerunExample(_Model):
    """One re-run example: its outputs on each re-run (each a list, one per sample)."""

    id: str = Field(description="the example's id")
    outputs: list[list[str]] = Field(description="re-run k -> that re-run's outputs")


class ConfirmedCheck(_Model):
    """A check that failed on the first run, gated again on each re-run."""

    check: str = Field(description="the check's id")
    confirmed: bool = Field(description="true when it failed again on every re-run")
    failed_reruns: int = Field(description="how many re-runs it failed on")


class Confirmation(_Model):
    """How a suite's failing checks were confirmed (or forgiven) by re-running the system."""

    reruns: int = Field(description="re-runs asked for (confirm.reruns)")
    examples: list[RerunExample] = Field(
        default_factory=list, description="the examples re-run, with their re-run outputs"
    )
    calls: int = Field(default=0, description="calls the re-runs made to the system")
    seconds: float = Field(default=0.0, description="time the re-runs and their gating took")
    checks: list[ConfirmedCheck] = Field(
        default_factory=list, description="each failing check and what the re-runs made of it"
    )
    note: str | None = Field(
        default=None, description="why nothing was re-run (a predictions file cannot be)"
    )


class BudgetUse(_Model):
    """The run's spend on calls that report a cost (``llm_judge``) against ``budget.max_usd``."""

    max_usd: float = Field(description="budget.max_usd")
    spent_usd: float = Field(description="what this run's calls cost (cached ones cost nothing)")
    calls: int = Field(description="calls that were paid for in this run")
    stopped: bool = Field(
        default=False, description="true when the run stopped before a call that would exceed"
    )
