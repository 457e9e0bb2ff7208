"""The job-level steps: route -> plan -> (layer chords) -> verify -> synthesize -> finalize.

Each step loads what it needs from the ledger, asks orchestration what to do, records the
outcome, and enqueues the next step; none waits for another task.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from ragq.errors import BudgetExhaustedError
from ragq.ledger import (
    NewSubQuery,
    get_job,
    job_evidence,
    job_sub_queries,
    record_plan,
    record_sub_queries,
    record_verification,
    session_scope,
)
from ragq.ledger.models import PlanRow, VerificationRow
from ragq.orchestration.budgets import budget_stop, exhausted_dimension
from ragq.orchestration.canvas import (
    FINALIZE,
    PLAN,
    SYNTHESIZE,
    VERIFY,
    layer_chord,
    step_signature,
)
from ragq.orchestration.context import estimate_tokens
from ragq.orchestration.plan import ValidatedPlan, layers, validate_plan
from ragq.orchestration.routing import RoutePath, budget_for, path_for
from ragq.orchestration.stop_rules import VerifyRound, decide_stop
from ragq.schemas.flow import Plan, PlannedSubQuery, QuestionClass, RouteDecision
from ragq.schemas.statuses import BudgetDimension, JobStatus, SubQueryOrigin
from ragq.schemas.tasks import Task
from ragq.tasks.budget_guard import charge, exhausted, open_budget
from ragq.tasks.flow_base import FlowTask, to_evidence
from ragq.tasks.webhooks import enqueue_webhooks


@shared_task(base=FlowTask, name=Task.ROUTE, bind=True)
def route(self: FlowTask, job_id: str) -> str | None:
    """Classify the question (unless the ticket fixed the route) and start the path (C3)."""
    job = self.open_job(job_id, JobStatus.ROUTING)
    if job is None:
        return None
    override = job.meta.get("route")
    open_budget(self, job_id, override or RoutePath.SIMPLE.value)
    if override:
        decision = RouteDecision(question_class=QuestionClass.MULTI_HOP,
                                 reason=f"route {override!r} set by the ticket")
        path = RoutePath(override)
    else:
        provider = self.res.provider
        try:
            decision = self.model_call(job_id, "router", "route",
                                       lambda: provider.route(job.question),
                                       reserve=estimate_tokens(job.question))
        except BudgetExhaustedError as exc:
            return _out_of_budget(self, job_id, exc)
        path = path_for(decision.question_class)
    open_budget(self, job_id, path.value)
    with session_scope(self.res.engine) as session:
        row = get_job(session, job_id=job_id)
        row.question_class, row.route, row.route_reason = (
            decision.question_class.value, path.value, decision.reason)
    if path is RoutePath.SIMPLE:
        single = Plan(sub_queries=[PlannedSubQuery(text=job.question)], reason="simple route")
        _start_plan(self, job_id, job.question,
                    validate_plan(single, question=job.question, max_sub_queries=1),
                    cache_hit=False)
    else:
        step_signature(self.app, PLAN, job_id).apply_async()
    return path.value


@shared_task(base=FlowTask, name=Task.PLAN, bind=True)
def plan(self: FlowTask, job_id: str) -> int | None:
    """Decompose into a DAG of sub-queries, validate it, and launch its first layer (C4, C5)."""
    job = self.open_job(job_id, JobStatus.PLANNING)
    if job is None:
        return None
    budget = budget_for(job.route or RoutePath.FULL)
    try:
        proposed, cache_hit = _proposed_plan(self, job_id, job.question, budget.max_sub_queries)
    except BudgetExhaustedError as exc:
        _out_of_budget(self, job_id, exc)
        return None
    validated = validate_plan(proposed, question=job.question,
                              max_sub_queries=budget.max_sub_queries)
    _start_plan(self, job_id, job.question, validated, cache_hit=cache_hit)
    return len(validated.sub_queries)


WHOLE_QUESTION = "the whole question, searched beside its parts"


def _proposed_plan(task: FlowTask, job_id: str, question: str, max_sub_queries: int
                   ) -> tuple[Plan, bool]:
    """The plan cache's plan for this question (a step, no model call), else the planner's,
    which is then cached; and whether it was a cache hit (C4, C12)."""
    provider, cache = task.res.provider, task.res.plan_cache
    key = {"provider": provider.name, "max_sub_queries": max_sub_queries}
    cached = cache.get(question, **key)
    if cached is not None:
        # The key a planner call's charge has: a redelivered step that finds the plan cached
        # (its first delivery put it there) must not pay a second step.
        refused = charge(task, job_id, "plan:pre", {BudgetDimension.STEPS: 1}, step="planner")
        if refused is not None:
            raise BudgetExhaustedError(refused.value)
        return cached, True
    proposed = task.model_call(job_id, "planner", "plan", lambda: provider.plan(
        question, max_sub_queries=max_sub_queries), reserve=estimate_tokens(question))
    cache.put(question, proposed, **key)
    return proposed, False


def _out_of_budget(task: FlowTask, job_id: str, exc: BudgetExhaustedError) -> str:
    """Stop enqueueing work: answer from what the job has, naming what ran out (C9)."""
    reason = budget_stop(exc.dimension)
    step_signature(task.app, SYNTHESIZE, job_id, reason).apply_async()
    return reason


def _start_plan(task: FlowTask, job_id: str, question: str, validated: ValidatedPlan, *,
                cache_hit: bool) -> None:
    with session_scope(task.res.engine) as session:
        record_plan(session, job_id=job_id, round=0,
                    plan=validated.as_plan().model_dump(mode="json"),
                    strategy=validated.strategy.value,
                    repair_reason="; ".join(validated.repairs) or None, cache_hit=cache_hit)
        items = [NewSubQuery(index=i, text=sq.text, depends_on=sq.depends_on, reason=sq.reason)
                 for i, sq in enumerate(validated.sub_queries)]
        if len(items) > 1:
            # The question itself, searched beside its parts: a decomposition can lose what the
            # whole question says, and one extra search is cheap insurance.
            items.append(NewSubQuery(index=len(items), text=question,
                                     reason=WHOLE_QUESTION))
        rows = record_sub_queries(session, job_id=job_id, round=0, items=items)
        first = [rows[i].id for i in layers(validated)[0]]
        first += [r.id for r in rows[len(validated.sub_queries):]]
    layer_chord(task.app, job_id, 0, 0, first).apply_async()


def _plan_layers(session: Any, job_id: str) -> list[list[int]]:
    row = session.query(PlanRow).filter_by(job_id=job_id, round=0).one()
    stored = Plan.model_validate(row.plan)
    return layers(ValidatedPlan(tuple(stored.sub_queries), stored.strategy))


@shared_task(base=FlowTask, name=Task.AFTER_LAYER, bind=True)
def after_layer(self: FlowTask, results: list[dict[str, Any]], job_id: str, round_: int,
                layer: int) -> str | None:
    """Chord body: launch the next layer of the plan, or verify, or (simple route) answer."""
    job = self.open_job(job_id)
    if job is None:
        return None
    ran_out = exhausted(self, job_id)
    if ran_out is not None:
        step_signature(self.app, SYNTHESIZE, job_id, budget_stop(ran_out)).apply_async()
        return "synthesize"
    if round_ == 0:
        with session_scope(self.res.engine) as session:
            plan_layers = _plan_layers(session, job_id)
            if layer + 1 < len(plan_layers):
                rows = job_sub_queries(session, job_id=job_id, round=0)
                ids = [rows[i].id for i in plan_layers[layer + 1]]
            else:
                ids = []
        if ids:
            layer_chord(self.app, job_id, 0, layer + 1, ids).apply_async()
            return "next_layer"
    if job.route == RoutePath.SIMPLE or budget_for(job.route or "full").max_verify_rounds == 0:
        step_signature(self.app, SYNTHESIZE, job_id, "single_shot").apply_async()
        return "synthesize"
    step_signature(self.app, VERIFY, job_id, round_).apply_async()
    return "verify"


@shared_task(base=FlowTask, name=Task.VERIFY, bind=True)
def verify(self: FlowTask, job_id: str, round_: int) -> str | None:
    """Judge the evidence so far; follow up with a new chord or move on to synthesis (C8)."""
    job = self.open_job(job_id, JobStatus.VERIFYING)
    if job is None:
        return None
    with session_scope(self.res.engine) as session:
        rows = job_evidence(session, job_id=job_id)
        evidence = [to_evidence(r) for r in rows]
        findings = [s.finding for s in job_sub_queries(session, job_id=job_id) if s.finding]
        new = _new_evidence(rows, round_, session, job_id)
        history = session.query(VerificationRow).filter_by(job_id=job_id).order_by(
            VerificationRow.round).all()
    provider = self.res.provider
    try:
        verdict = self.model_call(job_id, "verifier", f"verify:{round_}", lambda: provider.verify(
            job.question, evidence, findings=findings),
            reserve=estimate_tokens(" ".join([job.question, *(e.text for e in evidence)])))
    except BudgetExhaustedError as exc:
        return _out_of_budget(self, job_id, exc)
    budget = budget_for(job.route or RoutePath.FULL)
    rounds = [VerifyRound(v.sufficient, v.confidence, v.new_evidence_count or 0)
              for v in history if v.round < round_]
    rounds.append(VerifyRound(verdict.sufficient, verdict.confidence, new))
    decision = decide_stop(rounds, min_confidence=self.settings.min_confidence,
                           max_rounds=budget.max_verify_rounds)
    follow_ups = list(dict.fromkeys(q for q in verdict.follow_up_queries if q.strip()))
    with session_scope(self.res.engine) as session:
        record_verification(session, job_id=job_id, round=round_, sufficient=verdict.sufficient,
                            confidence=verdict.confidence, missing_info=verdict.missing_info,
                            follow_up_queries=follow_ups, reason=verdict.reason,
                            new_evidence_count=new)
        if decision.stop or not follow_ups:
            reason = decision.reason.value if decision.reason else "no_follow_up"
        else:
            rows = record_sub_queries(session, job_id=job_id, round=round_ + 1, items=[
                NewSubQuery(index=i, text=q, origin=SubQueryOrigin.FOLLOW_UP,
                            reason="verifier follow-up")
                for i, q in enumerate(follow_ups[: budget.max_sub_queries])
            ])
            reason = ""
    if reason:
        step_signature(self.app, SYNTHESIZE, job_id, reason).apply_async()
        return reason
    layer_chord(self.app, job_id, round_ + 1, 0, [r.id for r in rows]).apply_async()
    return "follow_up"


def _new_evidence(rows: list[Any], round_: int, session: Any, job_id: str) -> int:
    """Chunks first found by this round's sub-queries (not seen in any earlier round)."""
    rounds = {s.id: s.round for s in job_sub_queries(session, job_id=job_id)}
    earlier = {r.chunk_id for r in rows if rounds.get(r.sub_query_id, 0) < round_}
    now = {r.chunk_id for r in rows if rounds.get(r.sub_query_id, 0) == round_}
    return len(now - earlier)


@shared_task(base=FlowTask, name=Task.FINALIZE, bind=True)
def finalize(self: FlowTask, job_id: str, status: str, stop_reason: str,
             context_tokens: int = 0) -> str:
    """End the job once, with its result line built from the ledger."""
    from ragq.ledger import finish_job
    from ragq.ledger.results import build_result

    with session_scope(self.res.engine) as session:
        result = build_result(session, job_id=job_id, status=status, stop_reason=stop_reason,
                              context_tokens=context_tokens)
        ran_out = exhausted_dimension(stop_reason)
        finish_job(session, job_id=job_id, status=JobStatus(status), result=result,
                   stop_reason=stop_reason, exhausted_dimension=ran_out.value if ran_out else None)
    # Also when this is a redelivery: the ending may have committed before its events were sent.
    enqueue_webhooks(self.app, self.res.engine, job_id=job_id)
    return status


__all__ = ["FINALIZE", "after_layer", "finalize", "plan", "route", "verify"]
