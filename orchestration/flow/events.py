"""What happened: the events a step feeds to :func:`ragq.orchestration.flow.decide`.

A task starts a step with a ``...Due`` event (or :class:`JobStarted`); the work a decision asks
for comes back as the next event (:class:`RoleAnswered`, :class:`Probed`, :class:`Searched`,
:class:`PlanLookedUp`); a refused budget charge comes back as :class:`Refused`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ragq.schemas.cache import CachedEvidence, CachedHit
from ragq.schemas.flow import Plan, Usage
from ragq.schemas.statuses import BudgetDimension

if TYPE_CHECKING:
    from ragq.orchestration.flow.actions import Action, CallRole, Charge


class Event:
    """Base of every event."""


@dataclass(frozen=True)
class JobStarted(Event):
    """The route task picked the job up."""


@dataclass(frozen=True)
class PlanDue(Event):
    """The plan task picked the job up."""


@dataclass(frozen=True)
class PlanLookedUp(Event):
    """The plan cache answered for ask ``ask``: the plan cached for its text, or None."""

    plan: Plan | None
    ask: int = 0


@dataclass(frozen=True)
class RetrieveDue(Event):
    """Search for attempt ``attempt`` of sub-query (round, index); ``text`` is a rewrite to
    search instead of the planned text."""

    round: int
    index: int
    attempt: int = 0
    text: str | None = None


@dataclass(frozen=True)
class Probed(Event):
    """What the search needs before it is paid: the query's vector, an earlier request of the
    job saying the same thing (near-duplicate), else the evidence cache's entry with the current
    versions of its documents. ``billed_tokens`` were embedded to find out.
    ``question_vector`` is the job's question's, when the probe was asked to embed it."""

    request: RetrieveDue
    query: str
    vector: Sequence[float]
    near_duplicate_of: str | None = None
    cached: CachedEvidence | None = None
    versions: Mapping[str, str] = field(default_factory=dict)
    billed_tokens: int = 0
    question_vector: Sequence[float] | None = None


@dataclass(frozen=True)
class Searched(Event):
    """The vector store answered a paid search."""

    request: RetrieveDue
    query: str
    hits: tuple[CachedHit, ...]
    latency_ms: int
    #: Why the search's metadata filters were given up for an unfiltered search (None: they
    #: were kept, or there were none).
    fallback: str | None = None


@dataclass(frozen=True)
class CheckDue(Event):
    """Judge attempt ``attempt`` of sub-query (round, index)."""

    round: int
    index: int
    attempt: int


@dataclass(frozen=True)
class LayerDone(Event):
    """Every pipeline of one layer's chord ended."""

    round: int
    layer: int


@dataclass(frozen=True)
class VerifyDue(Event):
    """Judge the evidence after round ``round``."""

    round: int


@dataclass(frozen=True)
class SynthesizeDue(Event):
    """Answer; ``stop_reason`` says why the search ended."""

    stop_reason: str


@dataclass(frozen=True)
class RoleAnswered(Event):
    """A model role answered ``call`` (``usage`` None: answered in process, unpaid)."""

    call: CallRole
    value: BaseModel
    usage: Usage | None
    provider: str = ""


@dataclass(frozen=True)
class RoleFailed(Event):
    """A model role failed for good with ``error``; its attempts are recorded, then the error
    leaves the step (and fails the job)."""

    call: CallRole
    usage: Usage
    provider: str
    error: Exception


@dataclass(frozen=True)
class Refused(Event):
    """The budget refused ``charge`` on ``dimension`` while handling ``during``; ``dropped``
    are the actions that were to follow it and did not run."""

    dimension: BudgetDimension
    charge: Charge
    during: Event
    dropped: tuple[Action, ...] = ()


@dataclass(frozen=True)
class StepFailed(Event):
    """A step raised for good: the job fails with ``error``."""

    error: Mapping[str, Any]
