"""Between layers and rounds: the next layer of the plan, verification, follow-up rounds.

After the plan's searches the evidence contract (:mod:`ragq.orchestration.contract`) is
checked. A plan of one sub-query met it when its check was sufficient from a cited source: that
check is the verification, and the loop ends with no verifier call (the check recorded as round
0's verification, with the contract). A plan of several sub-queries that met it still asks the
verifier by default (``FlowConfig.contract_stops_plans``): all its hops answered is not yet the
question answered (a bridge the last hop found may have no evidence about it), and without
that verdict hotpotqa and musique lost 0.03 and 0.04 all-gold in context.

Otherwise the loop ends when the verdict is sufficient with enough confidence, when the route's
rounds are used, when two rounds add no new evidence, when the verifier asks nothing more, or
when the budget says stop; then the job answers from what it has.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragq.orchestration.budgets import budget_stop
from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.contract import EvidenceContract, KeyState, Requirement, check_contract
from ragq.orchestration.flow.actions import (
    Action,
    Enqueue,
    EnqueueLayer,
    NewSubQuery,
    RecordSubQueries,
    RecordVerification,
    SetStatus,
    VerifyRequest,
)
from ragq.orchestration.flow.calls import ask, settle
from ragq.orchestration.flow.events import LayerDone, RoleAnswered, VerifyDue
from ragq.orchestration.flow.state import JobState
from ragq.orchestration.plan import ValidatedPlan, layers
from ragq.orchestration.routing import RoutePath, budget_for
from ragq.orchestration.stop_rules import StopReason, VerifyRound, decide_stop
from ragq.orchestration.text import normalize_query
from ragq.schemas.flow import Verification
from ragq.schemas.statuses import JobStatus, SubQueryOrigin, SubQueryStatus
from ragq.schemas.tasks import Task

SINGLE_SHOT = "single_shot"
NO_FOLLOW_UP = "no_follow_up"


def on_layer_done(state: JobState, event: LayerDone) -> list[Action]:
    """The plan's next layer, else verification (unless the evidence contract ended the loop),
    else (simple route, or a route without verification rounds) the answer; straight to the
    answer once the budget refused anything."""
    if (ran_out := state.first_refused) is not None:
        return [Enqueue(Task.SYNTHESIZE, (budget_stop(ran_out),))]
    if event.round == 0 and state.plan is not None:
        plan = ValidatedPlan(tuple(state.plan.sub_queries), state.plan.strategy)
        plan_layers = layers(plan)
        if event.layer + 1 < len(plan_layers):
            return [EnqueueLayer(0, event.layer + 1, tuple(plan_layers[event.layer + 1]))]
    route = state.route or RoutePath.FULL
    if route == RoutePath.SIMPLE or budget_for(route).max_verify_rounds == 0:
        return [Enqueue(Task.SYNTHESIZE, (SINGLE_SHOT,))]
    if event.round == 0 and (met := stop_on_contract(state)):
        return met
    return [Enqueue(Task.VERIFY, (event.round,))]


def stop_on_contract(state: JobState) -> list[Action]:
    """The answer, with the contract's check recorded as round 0's verification, when the plan's
    searches met the evidence contract and that is enough (a plan of one sub-query, or every
    plan with ``contract_stops_plans``); else nothing."""
    contract, keys = evidence_contract(state)
    check = check_contract(contract, keys)
    if not check.met or (len(contract.requirements) > 1
                         and not state.config.contract_stops_plans):
        return []
    verdict = Verification(sufficient=True, confidence=1.0, reason=(
        f"{check.reason}, no verifier call; contract: {contract.describe()}"))
    return [RecordVerification(0, verdict, (), new_evidence(state, 0)),
            Enqueue(Task.SYNTHESIZE, (StopReason.SUFFICIENT.value,))]


def evidence_contract(state: JobState) -> tuple[EvidenceContract, dict[str, KeyState]]:
    """The job's contract, one key per sub-query its plans hold (the whole-question and
    whole-ticket searches are insurance, not requirements), and what the ledger holds for
    each: its check and its evidence."""
    keys = {f"{s.index}: {s.final_text or s.text}": KeyState(
        s.status == SubQueryStatus.SUFFICIENT, tuple(state.evidence_of(sub_query_id=s.id)))
        for s in state.planned_keys}
    return EvidenceContract(tuple(Requirement(key) for key in keys)), keys


def on_verify_due(state: JobState, event: VerifyDue) -> list[Action]:
    evidence = tuple(state.evidence_of())
    reserve = estimate_tokens(" ".join([state.asked, *(e.text for e in evidence)]))
    missing = check_contract(*evidence_contract(state)).missing if event.round == 0 else ()
    request = VerifyRequest(state.asked, evidence, tuple(state.findings), missing)
    return [SetStatus(JobStatus.VERIFYING),
            *ask("verifier", f"verify:{event.round}", reserve, request, {"round": event.round})]


def on_verifier(state: JobState, event: RoleAnswered) -> list[Action]:
    """Record the verdict, then follow up with a new round or answer (see the module)."""
    verdict = event.value
    assert isinstance(verdict, Verification)
    round_ = int(event.call.context["round"])
    new = new_evidence(state, round_)
    history = [VerifyRound(v.sufficient, v.confidence, v.new_evidence)
               for v in sorted(state.verifications, key=lambda v: v.round) if v.round < round_]
    history.append(VerifyRound(verdict.sufficient, verdict.confidence, new))
    budget = budget_for(state.route or RoutePath.FULL)
    decision = decide_stop(history, min_confidence=state.config.min_confidence,
                           max_rounds=budget.max_verify_rounds)
    follow_ups = follow_up_queries(verdict, searched=[r.query for r in state.requests])
    record = RecordVerification(round_, verdict, follow_ups, new)
    if decision.stop or not follow_ups:
        reason = decision.reason.value if decision.reason else NO_FOLLOW_UP
        return [*settle(event), record, Enqueue(Task.SYNTHESIZE, (reason,))]
    items = tuple(NewSubQuery(i, q, origin=SubQueryOrigin.FOLLOW_UP, reason="verifier follow-up")
                  for i, q in enumerate(follow_ups[: budget.max_sub_queries]))
    return [*settle(event), record, RecordSubQueries(round_ + 1, items),
            EnqueueLayer(round_ + 1, 0, tuple(range(len(items))))]


def follow_up_queries(verdict: Verification, *, searched: Sequence[str] = ()
                      ) -> tuple[str, ...]:
    """The verifier's follow-ups, in its order, without blanks, repeats and queries the job
    already searched (normalized): a round of those would bring back the same hits and spend
    a sufficiency check, a finder and a verifier on them. None left ends the loop."""
    done = {normalize_query(q) for q in searched}
    fresh = (q for q in verdict.follow_up_queries if q.strip() and normalize_query(q) not in done)
    return tuple(dict.fromkeys(fresh))


def new_evidence(state: JobState, round_: int) -> int:
    """Chunks first found by round ``round_``'s sub-queries (not seen in any earlier round)."""
    rounds = {s.id: s.round for s in state.sub_queries}
    earlier = {e.item.chunk_id for e in state.evidence
               if rounds.get(e.sub_query_id or "", 0) < round_}
    now = {e.item.chunk_id for e in state.evidence
           if rounds.get(e.sub_query_id or "", 0) == round_}
    return len(now - earlier)
