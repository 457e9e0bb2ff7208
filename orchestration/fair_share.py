"""Fair shares of the waiting line (issue 36): which waiting jobs take the free places of the
window of open jobs, so that one tenant's backlog never starves another tenant's ticket.

The window's places are shared across tenants by weight, then across a tenant's batches, and
within a tenant interactive jobs go ahead of bulk ones. The rule is weighted fair queuing in
its stateless form: a tenant's *use* is its open jobs (and those claimed so far in this call)
divided by its weight, and each free place goes to the tenant with the least use that still has
a job it may start. Open jobs are the state that matters (a place is held until its job ends),
so no counter has to be kept between calls, and the rule is the same whoever claims.

::

    free places ─┬─> tenant with the least open/weight (ties: the oldest waiting job first)
                 │      └─> its interactive jobs first, then its batch with the fewest open
                 │          jobs (ties: the oldest), the batch's jobs in line order
                 └─> again, until no place is free or nothing waiting may start

One *round* is every tenant with something to start served once per unit of its weight: no
tenant that may start a job waits longer than that while others are served, a tenant alone
takes the whole window, and two with backlogs each hold half of it. A tenant at its
``max_open_jobs`` starts nothing until one of its jobs ends; its places go to the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from ragq.schemas.ticket import Priority

__all__ = ["Claimed", "LineState", "TenantShare", "WaitingJob", "claim_order"]

Lane = tuple[str, str | None]  # (tenant, batch id; None: a job outside any batch)


@dataclass(frozen=True)
class TenantShare:
    """A tenant's ``weight`` (its share of the window against the others' weights, at least 1)
    and ``max_open_jobs`` (None: only the window limits it)."""

    weight: int = 1
    max_open_jobs: int | None = None

    def __post_init__(self) -> None:
        if self.weight < 1:
            raise ValueError(f"weight must be at least 1, got {self.weight}")
        if self.max_open_jobs is not None and self.max_open_jobs < 0:
            raise ValueError(f"max_open_jobs must be 0 or more, got {self.max_open_jobs}")


@dataclass(frozen=True)
class WaitingJob:
    """A job waiting unsent; a sequence of them is given oldest first (the line order)."""

    job_id: str
    tenant: str
    batch_id: str | None
    priority: Priority = Priority.BULK


class Claimed(NamedTuple):
    """A job a claim marked sent: whoever claimed it sends its route step, with the broker
    priority its ``priority`` gives (docs/fair-share.md#priority), so an interactive job's
    first step does not wait behind the bulk jobs already sent."""

    job_id: str
    priority: Priority


@dataclass(frozen=True)
class LineState:
    """The line as the ledger sees it: the ``waiting`` jobs in line order, the ``open`` jobs
    per (tenant, batch), each tenant's share (a tenant not named has the default share), the
    ``free`` places of the window (None: no limit), and the ``reserve``: places past the free
    ones that only interactive jobs may take (the interactive reserve not in use)."""

    waiting: Sequence[WaitingJob]
    open: Mapping[Lane, int] = field(default_factory=dict)
    shares: Mapping[str, TenantShare] = field(default_factory=dict)
    free: int | None = None
    reserve: int = 0


def claim_order(state: LineState) -> list[str]:
    """The ids of the waiting jobs to start now, in the order they were chosen: as many as
    there are free places (all when ``free`` is None), fewer only when every tenant left with
    waiting jobs is at its ``max_open_jobs``; then, into the ``reserve``, interactive jobs
    alone, shared across tenants the same way. A single interactive ticket so never waits for a
    bulk job to end when a backlog fills the window (docs/fair-share.md#priority)."""
    queues: dict[str, dict[tuple[bool, str | None], list[tuple[int, str]]]] = {}
    for index, job in enumerate(state.waiting):
        lane = (job.priority != Priority.INTERACTIVE, job.batch_id)
        queues.setdefault(job.tenant, {}).setdefault(lane, []).append((index, job.job_id))
    used: dict[Lane, int] = dict(state.open)
    per_tenant = {t: sum(n for (owner, _), n in used.items() if owner == t) for t in queues}
    for lanes in queues.values():
        for jobs in lanes.values():
            jobs.reverse()  # oldest last: popped first
    claimed = _take(queues, used, per_tenant, state.shares, state.free)
    if state.reserve and state.free is not None:
        for lanes in queues.values():
            for lane in [k for k in lanes if k[0]]:  # bulk lanes: no place in the reserve
                del lanes[lane]
        claimed += _take(queues, used, per_tenant, state.shares, state.reserve)
    return claimed


def _take(queues: dict[str, dict[tuple[bool, str | None], list[tuple[int, str]]]],
          used: dict[Lane, int], per_tenant: dict[str, int],
          shares: Mapping[str, TenantShare], places: int | None) -> list[str]:
    """Up to ``places`` jobs off ``queues`` (all for None), tenant by tenant share, taken out
    of ``queues`` and counted in ``used`` and ``per_tenant``."""
    claimed: list[str] = []
    while places is None or len(claimed) < places:
        tenant = _next_tenant(queues, per_tenant, shares)
        if tenant is None:
            break
        lanes = queues[tenant]
        lane = min(lanes, key=lambda k: (k[0], used.get((tenant, k[1]), 0), lanes[k][-1][0]))
        claimed.append(lanes[lane].pop()[1])
        if not lanes[lane]:
            del lanes[lane]
        used[(tenant, lane[1])] = used.get((tenant, lane[1]), 0) + 1
        per_tenant[tenant] += 1
    return claimed


def _next_tenant(queues: Mapping[str, Mapping[tuple[bool, str | None], list[tuple[int, str]]]],
                 per_tenant: Mapping[str, int], shares: Mapping[str, TenantShare]
                 ) -> str | None:
    """The tenant with the least open jobs per unit of weight among those with a job they may
    start; ties go to the one whose oldest waiting job is oldest."""
    best: tuple[Fraction, int, str] | None = None
    for tenant, lanes in queues.items():
        share = shares.get(tenant, TenantShare())
        if not lanes or (share.max_open_jobs is not None
                         and per_tenant[tenant] >= share.max_open_jobs):
            continue
        oldest = min(jobs[-1][0] for jobs in lanes.values())
        key = (Fraction(per_tenant[tenant], share.weight), oldest, tenant)
        if best is None or key < best:
            best = key
    return None if best is None else best[2]
