"""The sufficiency check of one attempt and what follows it.

One model call decides it all: the verdict, the finding (what the sub-query found, for its
dependents and the verifier, with its runners-up) and, when not sufficient, the rewrite.
Sufficient, or not worth another search: the sub-query settles with the finding.
Insufficient, a dependent sub-query first searches again with its dependency's next candidate
(a wrong bridge is the usual reason a hop finds nothing), while attempts remain. Insufficient
after a weak pass (no hits, a low top score, top hits too close to tell apart): it searches the
verdict's rewrite, a phrasing from another angle, up to the route's attempts; a verifier's
follow-up is searched once (the next verdict is its rewrite). A strong pass the
check still calls insufficient is missing something a rewrite of the same need rarely finds;
the verifier's follow-ups ask for what is missing instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.flow.actions import (
    Action,
    CheckRequest,
    Continue,
    FinishSubQuery,
    RecordCheck,
)
from ragq.orchestration.flow.calls import ask, settle
from ragq.orchestration.flow.events import CheckDue, Refused, RoleAnswered
from ragq.orchestration.flow.retrieve import query_text, summary
from ragq.orchestration.flow.state import JobState, SubQueryState
from ragq.orchestration.retrieval import weak_pass
from ragq.orchestration.routing import RoutePath, budget_for
from ragq.orchestration.text import normalize_query
from ragq.schemas.flow import Evidence, SufficiencyVerdict
from ragq.schemas.statuses import SubQueryOrigin, SubQueryStatus
from ragq.schemas.tasks import Task

EXPAND = "expand:"
USED_UP = "attempts used up"
# A verifier's follow-up is already a query aimed at what is missing: one that finds nothing is
# asked again, in other words, by the next verdict, not rewritten here. Measured: the same
# all-gold and recall on every set, 3 model calls fewer per tau2 ticket (21.3 -> 18.3).
FOLLOW_UP_ONCE = "no expansion: a follow-up is searched once (the next verdict asks again)"


def next_candidate(state: JobState, sq: SubQueryState, attempt: int) -> tuple[str, str] | None:
    """For a dependent sub-query whose ``attempt`` did not answer it: the first other
    candidate of a dependency's finding (best first) whose substituted text none of its
    attempts up to this one searched, with that text. A wrong bridge is the usual reason a
    dependent hop finds nothing, and the finder's runner-up is often the right one ("Omineca
    Country" before "Zimbabwe"). Later attempts are left out, so a redelivered check chooses
    what the first delivery chose."""
    if not sq.depends_on:
        return None
    same_round = {s.index: s for s in state.round_sub_queries(sq.round)}
    tried = {normalize_query(r.query) for r in state.requests
             if r.sub_query_id == sq.id and r.attempt <= attempt}
    for dep in (i for i in sq.depends_on if i in same_round):
        for candidate in same_round[dep].alternatives:
            text = query_text(state, sq, instead={dep: candidate})
            if normalize_query(text) not in tried:
                return candidate, text
    return None


class _Attempt:
    """The attempt a check is about, found again from the step's context."""

    def __init__(self, state: JobState, context: Mapping[str, Any]):
        self.round, self.index, self.attempt = (context["round"], context["index"],
                                                context["attempt"])
        self.sq: SubQueryState = state.sub_query(self.round, self.index)
        request = state.request(self.sq.id, self.attempt)
        self.request_id = request.id if request else None
        self.latest = state.evidence_of(request_id=self.request_id, slot=self.sq.index) \
            if request else []
        self.key = f"{self.round}.{self.index}.{self.attempt}"

    @property
    def context(self) -> dict[str, Any]:
        return {"round": self.round, "index": self.index, "attempt": self.attempt}

    def settle(self, sufficient: bool, score: float, reason: str,
               finding: str | None, alternatives: tuple[str, ...] = ()) -> list[Action]:
        """Record the check and end the sub-query with what it found."""
        status = SubQueryStatus.SUFFICIENT if sufficient else SubQueryStatus.INSUFFICIENT
        return [RecordCheck(self.sq.id, self.request_id, self.attempt, sufficient, score, reason),
                FinishSubQuery(self.sq.id, status, finding, alternatives),
                summary(self.sq, sufficient, finding=finding)]

    def search_again(self, score: float, reason: str, text: str) -> list[Action]:
        """Record the check as insufficient with the text chosen next, and search that text
        as the next attempt."""
        return [RecordCheck(self.sq.id, self.request_id, self.attempt, False, score, reason,
                            text),
                Continue(Task.RETRIEVE, (self.round, self.index, self.attempt + 1, text))]


def on_check_due(state: JobState, event: CheckDue) -> list[Action]:
    att = _Attempt(state, {"round": event.round, "index": event.index,
                           "attempt": event.attempt})
    query = att.sq.searched_text
    found = tuple(state.evidence_of(sub_query_id=att.sq.id, slot=att.sq.index))
    tried = tuple(r.query for r in state.requests if r.sub_query_id == att.sq.id)
    reserve = estimate_tokens(" ".join([query, *(e.text for e in found or att.latest)]))
    request = CheckRequest(query, tuple(att.latest), found, att.attempt + 1, tried)
    local = state.config.lean_checks and not verdict_can_steer(state, att)
    return ask("sufficiency", f"check:{att.key}", reserve, request, att.context, local=local)


def verdict_can_steer(state: JobState, att: _Attempt) -> bool:
    """Whether the verdict of this attempt's check can change what the job does next, so the
    model is asked; when it cannot, the local rules check it (a check still recorded, with
    its finding, and no model call: C7 and C25).

    A verdict steers when it may lead to another search (attempts remain, and a rewrite of a
    weak pass or the dependency's next candidate would be searched), when a dependent
    sub-query waits for its finding, when it may stop the job on the evidence contract, or
    when it is a plan's first word on one of its keys (what the verifier is told is missing).
    A hop of a chain is always the model's: its finding is what the chain found. Left to the
    local rules: the last rewrite of a plan's independent sub-query already found
    insufficient, and a verifier's follow-up, which is searched once and read again by the
    next verifier."""
    sq = att.sq
    if sq.depends_on or any(sq.index in s.depends_on for s in state.round_sub_queries(sq.round)):
        return True
    if sq.round == 0 and (att.attempt == 0 or state.config.contract_stops_plans
                          or len(state.planned_keys) <= 1):
        return True
    return expansion(state, att.attempt, False, att.latest,
                     follow_up=sq.origin == SubQueryOrigin.FOLLOW_UP).startswith(EXPAND)


def on_sufficiency(state: JobState, event: RoleAnswered) -> list[Action]:
    """Settle with the verdict's finding, or search again: the dependency's next candidate,
    else the verdict's rewrite (see the module)."""
    verdict = event.value
    assert isinstance(verdict, SufficiencyVerdict)
    att = _Attempt(state, event.call.context)
    expand = expansion(state, att.attempt, verdict.sufficient, att.latest,
                       follow_up=att.sq.origin == SubQueryOrigin.FOLLOW_UP)
    reason = f"{verdict.reason}; {expand}" if expand else verdict.reason
    paid = settle(event, roles=verdict.roles)
    retry = None if verdict.sufficient or expand == USED_UP \
        else next_candidate(state, att.sq, att.attempt)
    if retry is not None:
        candidate, text = retry
        why = f"{verdict.reason}; the dependency's next candidate: {candidate!r}"
        return paid + att.search_again(verdict.score, why, text)
    if expand.startswith(EXPAND) and verdict.rewrite is not None:
        return paid + att.search_again(verdict.score, reason, verdict.rewrite.text)
    finding = verdict.finding
    return paid + att.settle(verdict.sufficient, verdict.score, reason,
                             finding.text if finding and finding.text else None,
                             tuple(a for a in finding.alternatives if a.strip())
                             if finding else ())


def on_refused(state: JobState, event: Refused) -> list[Action]:
    """Out of budget, the sub-query settles with what it has: unchecked when the check itself
    was refused."""
    due = event.during
    assert isinstance(due, CheckDue)
    att = _Attempt(state, {"round": due.round, "index": due.index, "attempt": due.attempt})
    return att.settle(False, 0.0, f"budget: budget exhausted: {event.dimension.value}", None)


def expansion(state: JobState, attempt: int, sufficient: bool, latest: list[Evidence], *,
              follow_up: bool = False) -> str:
    """Whether to rewrite and search again, as a reason for the ledger: ``expand: <why the
    pass was weak>``, or why not (empty when the check was satisfied; a verifier's
    ``follow_up`` that would expand is searched once instead)."""
    if sufficient:
        return ""
    if attempt + 1 >= budget_for(state.route or RoutePath.FULL).max_retrieval_attempts:
        return USED_UP
    config = state.config
    why: str | None
    if not config.adaptive_expansion:
        why = "adaptive expansion off"
    else:
        why = weak_pass([e.score for e in latest], min_top_score=config.expansion_min_top_score,
                        min_margin=config.expansion_min_margin)
        if not why:
            return "no expansion: the pass was strong"
    return FOLLOW_UP_ONCE if follow_up else f"{EXPAND} {why}"
