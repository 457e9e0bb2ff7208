"""Escalation to a human: whether a job that answered goes to the review queue, and
why.

A pure function of the job's snapshot, its draft answer and the status it would end with. Each
reason is a setting of :class:`ReviewPolicy` (so each can be turned off):

- ``route:<route>`` — the job took a route listed in ``routes`` (default ``escalate``: the
  router's *investigative* tickets);
- ``contradictions`` — the answer reports a contradiction about one subject that authority
  does not settle: its most authoritative side (lowest ``authority_tier``) is not alone (or a
  side's tier is unknown). A conflict where one source outranks every other is resolved by
  that source; one whose sides name different subjects (two products' fees) is no conflict
  at all (:func:`~ragq.orchestration.conflicts.one_subject`, whatever provider reported it);
- ``low_confidence`` — the last verifier verdict's confidence is below ``min_confidence``
  (jobs never verified, e.g. routed ``simple``, have no confidence to judge and are not
  escalated for it).

Only jobs that would end ``completed`` or ``insufficient_evidence`` are escalated
(:data:`~ragq.schemas.statuses.REVIEWABLE_JOB_STATUSES`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragq.orchestration.conflicts import one_subject
from ragq.schemas.flow import Contradiction, DraftAnswer
from ragq.schemas.statuses import REVIEWABLE_JOB_STATUSES, JobStatus

ROUTE_REASON = "route:"
CONTRADICTIONS = "contradictions"
LOW_CONFIDENCE = "low_confidence"


@dataclass(frozen=True)
class ReviewPolicy:
    """What sends a job to review. ``routes``: routes always reviewed (empty: none);
    ``contradictions``: review answers with unresolved contradictions; ``min_confidence``:
    review when the final verifier confidence is below it (0: never)."""

    routes: frozenset[str] = frozenset({"escalate"})
    contradictions: bool = True
    min_confidence: float = 0.0

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"min_confidence must be within [0, 1], got {self.min_confidence}")


def unresolved(conflict: Contradiction, tiers: Mapping[str, int]) -> bool:
    """Whether authority does not settle ``conflict``: its best (lowest) tier is held by more
    than one side, or a side's chunk has no known tier."""
    sides = [tiers.get(chunk) for chunk in conflict.chunk_ids]
    known = [t for t in sides if t is not None]
    if len(known) < max(2, len(sides)):
        return True
    return known.count(min(known)) > 1


def escalation_reasons(*, policy: ReviewPolicy, outcome: JobStatus, route: str | None,
                       draft: DraftAnswer, tiers: Mapping[str, int],
                       confidences: Sequence[float]) -> tuple[str, ...]:
    """Why a job ending with ``outcome`` needs a human, in a fixed order (empty: it does not).

    ``tiers`` maps chunk ids of the job's evidence to their authority tier; ``confidences``
    are the verifier's verdicts in round order (the last one counts)."""
    if outcome not in REVIEWABLE_JOB_STATUSES:
        return ()
    reasons: list[str] = []
    if route is not None and route in policy.routes:
        reasons.append(f"{ROUTE_REASON}{route}")
    if policy.contradictions and any(one_subject(c) and unresolved(c, tiers)
                                     for c in draft.contradictions):
        reasons.append(CONTRADICTIONS)
    if policy.min_confidence > 0 and confidences and confidences[-1] < policy.min_confidence:
        reasons.append(LOW_CONFIDENCE)
    return tuple(reasons)
