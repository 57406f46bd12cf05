"""The regression diagnosis as the result records it: per suite, what the failure-mode
detectors found on both sides, the clusters of unexplained regressed examples, the headline
and what changed since the baseline (``SuiteResult.diagnosis``); per example, the categories of
its current and blessed outputs (``ExampleResult.diagnosis``).

The category names are part of the JSON contract: the built-in detectors' names
(``empty``, ``truncated``, ``repetition``, ``refusal``, ``language_switch``, ``format_break``,
``number_change``, ``copied_input``, ``length_drift``, ``surface_only``) and those of a
project's own detectors.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: the version of the ``diagnosis`` object's layout (not of any detector)
DIAGNOSIS_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExampleDiagnosis(_Model):
    """The categories (failure modes) found on one example's outputs."""

    current: list[str] = Field(description="modes present in today's output")
    baseline: list[str] | None = Field(
        description="modes present in the blessed output; null when there is none (a new"
        " example, an edited one, or no baseline)",
    )


class CategoryCounts(_Model):
    """One category over one suite: how many examples have it on each side."""

    baseline: int | None = Field(
        description="blessed outputs that have it (null: the blessed outputs were not diagnosed)"
    )
    current: int = Field(description="current outputs that have it")
    new: int | None = Field(
        description="examples that have it now and did not in their blessed output"
    )
    regressed: int | None = Field(description="regressed examples that newly have it")


class Cluster(_Model):
    """Regressed examples no detector explains, grouped by what they newly share."""

    pattern: str = Field(description="the shared opening or phrase (model output: untrusted)")
    kind: Literal["opening", "phrase"] = Field(
        description="opening: the outputs begin with it; phrase: they contain it (and their"
        " blessed outputs did not)"
    )
    count: int
    ids: list[str] = Field(description="the first of the examples (at most 20)")


class CommitChange(_Model):
    """One commit between the baseline's and HEAD."""

    commit: str
    subject: str = Field(description="its subject line (untrusted text)")


class Changes(_Model):
    """What changed since the baseline, where goldgate can see it."""

    baseline_commit: str | None = Field(
        default=None, description="the last commit of the baseline file (git)"
    )
    commits: list[CommitChange] = Field(
        default_factory=list, description="commits since the baseline's, newest first (at most 20)"
    )
    more_commits: int = Field(default=0, description="commits left out of `commits`")
    files: list[str] = Field(
        default_factory=list, description="files those commits touched (at most 50)"
    )
    more_files: int = Field(default=0, description="files left out of `files`")
    config: list[str] = Field(
        default_factory=list,
        description="configuration keys whose value differs from the baseline's commit",
    )
    signatures: list[str] = Field(
        default_factory=list, description="metrics whose signature differs from the blessed one"
    )
    versions: dict[str, str] = Field(
        default_factory=dict,
        description="goldgate, Python and key package versions of this run; `goldgate"
        " (baseline)` when the baseline was written by another goldgate",
    )


class SuiteDiagnosis(_Model):
    """Why a suite's quality moved: categories, clusters, the headline, what changed."""

    version: int = Field(default=DIAGNOSIS_VERSION, description="the layout of this object")
    regressed: int = Field(
        description="examples whose per-example score got worse than their blessed score"
    )
    metric: str | None = Field(
        default=None,
        description="the metric `regressed` is measured on: the one whose check failed, else"
        " the first gated metric",
    )
    baseline_side: Literal["diagnosed", "no baseline", "no outputs"] = Field(
        default="diagnosed",
        description="whether the blessed outputs were diagnosed too (no outputs: the baseline"
        " kept none, only the current side was)",
    )
    detectors: dict[str, int] = Field(
        default_factory=dict, description="each detector that ran → its version"
    )
    categories: dict[str, CategoryCounts] = Field(default_factory=dict)
    clusters: list[Cluster] = Field(default_factory=list)
    headline: str
    changes: Changes = Field(default_factory=Changes)
