"""The answer: the context assembled under the token budget, the synthesizer's
answer with its citations, and the job's end.

Synthesis always runs, also for a job out of budget: it answers from what the job found. Every
piece is paid first and each refusal degrades it gracefully: no rerank (evidence in retrieval
order), then no context (nothing fits), then no model (an extractive answer in process).
"""

from __future__ import annotations

from decimal import Decimal

from ragq.orchestration.budgets import budget_stop, exhausted_dimension
from ragq.orchestration.context import (
    assemble_with_floor,
    estimate_tokens,
    yield_answered_hops,
    yield_repeated_titles,
)
from ragq.orchestration.flow.actions import (
    Action,
    AnswerExtractively,
    CallRole,
    Charge,
    Escalation,
    FinishJob,
    FinishSubQuery,
    MarkInContext,
    RecordAnswer,
    RerankRequest,
    SendWebhooks,
    SetStatus,
    StartWaiting,
    SynthesizeRequest,
)
from ragq.orchestration.flow.calls import ask, settle
from ragq.orchestration.flow.events import Refused, RoleAnswered, StepFailed, SynthesizeDue
from ragq.orchestration.flow.review import escalation_reasons
from ragq.orchestration.flow.state import JobState
from ragq.orchestration.plan import depths
from ragq.orchestration.routing import ROUTE_ORDER, RoutePath
from ragq.orchestration.windows import fuse_rankings
from ragq.schemas.flow import DraftAnswer, Evidence, Ranking, Strategy
from ragq.schemas.statuses import BudgetDimension, JobStatus, SubQueryStatus

RERANK_KEY = "synthesize:rerank"
RERANK_CALL_KEY = "rerank:pre"
CONTEXT_KEY = "synthesize:context"


def pooled_evidence(state: JobState) -> list[Evidence]:
    """All evidence of the job, each item tagged with its sub-query's slot (for diversity) and
    the ask its sub-query serves, in the order the plan runs its searches: by round, layer,
    sub-query and attempt, each search's hits best first.

    Not in the order the searches were recorded: a layer's searches run in parallel on the
    workers and commit in any order, and ranking ties (one chunk found by two sub-queries
    reranks alike) fall to the earlier item, so the same job could assemble another context
    (seen: one MuSiQue question of 100 differed between the queue and one process)."""
    subs = {s.id: s for s in state.sub_queries}
    attempts = {r.id: r.attempt for r in state.requests}
    layer = _layers(state)
    placed = []
    windows = {s.id for s in state.sub_queries if s.is_ticket_window}
    for e in state.evidence:
        if e.sub_query_id in windows:
            continue
        attempt = attempts.get(e.request_id, 0)
        sq = subs.get(e.sub_query_id or "")
        place = (sq.round, layer[sq.id], sq.index, attempt) if sq else (-1, 0, 0, attempt)
        placed.append((place, e.item.model_copy(update={
            "sub_query_index": sq.slot if sq else 0, "ask_index": sq.ask if sq else None})))
    return [item for _, item in sorted(placed, key=lambda pair: pair[0])]


def floor_evidence(state: JobState) -> list[Evidence]:
    """The ticket's floor: the hits of its windows' searches (:mod:`~ragq.orchestration.windows`)
    fused by reciprocal rank into one ranking, one item per chunk. Empty for a question."""
    windows = sorted((s for s in state.sub_queries if s.is_ticket_window), key=lambda s: s.index)
    rankings = [sorted(state.evidence_of(sub_query_id=s.id), key=lambda e: -e.score)
                for s in windows]
    return fuse_rankings(rankings, id_of=lambda e: e.chunk_id)


def _layers(state: JobState) -> dict[str, int]:
    """Each sub-query's layer in its round's DAG (:func:`ragq.orchestration.plan.depths`)."""
    out: dict[str, int] = {}
    for round_ in {s.round for s in state.sub_queries}:
        subs = sorted((s for s in state.sub_queries if s.round == round_), key=lambda s: s.index)
        position = {s.index: n for n, s in enumerate(subs)}
        depth = depths([[position[d] for d in s.depends_on if d in position] for s in subs])
        out.update((s.id, d) for s, d in zip(subs, depth, strict=True))
    return out


def on_synthesize_due(state: JobState, event: SynthesizeDue) -> list[Action]:
    """Pay for the rerank (a rerank call, and the reranker's model call), then rerank the
    pooled evidence; the context (forced: assembling it is cheap and an answer is owed whatever
    ran out) and the answer model come after."""
    local = "reranker" in state.config.local_roles
    price = Decimal(0) if local else state.config.rerank_call_usd
    rerank = Charge(RERANK_KEY, {BudgetDimension.RERANK_CALLS: 1, BudgetDimension.COST_USD: price},
                    step="rerank")
    pool = tuple(pooled_evidence(state))
    asks = tuple(a.text for a in state.asks) if len(state.asks) > 1 else ()
    request = RerankRequest(state.asked, pool, asks)
    reserve = estimate_tokens(" ".join([state.asked, *(e.text for e in pool)]))
    return [SetStatus(JobStatus.SYNTHESIZING), *skip_unlaunched(state), rerank,
            *ask("reranker", "rerank", reserve, request, {"stop_reason": event.stop_reason},
                 local=local)]


def on_reranker(state: JobState, event: RoleAnswered) -> list[Action]:
    ranking = event.value
    assert isinstance(ranking, Ranking)
    stop_reason = str(event.call.context["stop_reason"])
    return [*settle(event), *_context_and_answer(state, stop_reason, ranking)]


def skip_unlaunched(state: JobState) -> list[Action]:
    """Sub-queries no layer launched (the budget or a failure ended the search first) end as
    skipped: every sub-query of an ended job has ended. Nothing is in flight here: synthesis
    starts after the last layer's chord, and a failed job's pipelines decide nothing more."""
    return [FinishSubQuery(s.id, SubQueryStatus.SKIPPED) for s in state.sub_queries
            if s.status == SubQueryStatus.PENDING]


def ranked(pool: list[Evidence], ranking: Ranking | None) -> list[Evidence]:
    """The pool with the reranker's scores; a chunk the ranking leaves out keeps its retrieval
    score, moved below every ranked one. No ranking (the rerank was refused): as retrieved."""
    if ranking is None or not ranking.scores:
        return pool
    scores = {s.chunk_id: s.score for s in ranking.scores}
    floor = min(scores.values())
    return [item.model_copy(update={"score": scores[item.chunk_id]}) if item.chunk_id in scores
            else item.model_copy(update={"score": min(item.score, floor) - 1.0})
            for item in pool]


def _context_and_answer(state: JobState, stop_reason: str, ranking: Ranking | None
                        ) -> list[Action]:
    """The context under the token budget (counted with the real tokenizer; each ask of a
    ticket gets its share, the whole scaled by the number of asks; the hops whose finding a
    later hop searched with yield their further hits, and so do further paragraphs of a title
    already ranked), then the synthesizer's call, which reserves the context's tokens. The
    context is recorded as spent whatever the budget says (it never passes what is left): the
    answer is owed in any case."""
    config = state.config
    pool = yield_repeated_titles(yield_answered_hops(ranked(pooled_evidence(state), ranking),
                                                     state.answered_hops))
    asks = [a.text for a in state.asks] or [state.asked]
    left = state.budget.remaining(BudgetDimension.CONTEXT_TOKENS) if state.budget else None
    limit = config.context_max_tokens * state.context_shares
    limit = limit if left is None else min(limit, int(left))
    context = assemble_with_floor(pool, floor_evidence(state), asks=asks, max_tokens=limit,
                                  count_tokens=config.count_tokens,
                                  max_items=state.context_items)
    tokens = sum(config.count_tokens(c.text) for c in context)
    paid = Charge(CONTEXT_KEY, {BudgetDimension.CONTEXT_TOKENS: tokens}, step="context",
                  force=True)
    return [paid, *_answer(state, stop_reason, context, tokens)]


def _answer(state: JobState, stop_reason: str, context: list[Evidence], tokens: int
            ) -> list[Action]:
    strategy = state.strategy or Strategy.SINGLE
    asks = tuple(a.text for a in state.asks) if len(state.asks) > 1 else ()
    request = SynthesizeRequest(state.asked, tuple(context), strategy.value,
                                tuple(state.findings), asks, tuple(state.chain_ends))
    return ask("synthesizer", "synthesize", tokens, request,
               {"stop_reason": stop_reason, "context_tokens": tokens})


def on_refused(state: JobState, event: Refused) -> list[Action]:
    """A refused rerank skips it (the evidence keeps its retrieval order); a refused answer
    model answers extractively, without a model, from the same context (the context itself is
    never refused)."""
    if event.charge.key in (RERANK_KEY, RERANK_CALL_KEY):
        assert isinstance(event.during, SynthesizeDue)
        return _context_and_answer(state, event.during.stop_reason, None)
    call = next(a for a in event.dropped if isinstance(a, CallRole))
    return [AnswerExtractively(call)]


def on_synthesizer(state: JobState, event: RoleAnswered) -> list[Action]:
    """Record the answer and which evidence reached it, and end the job: out of budget when
    any charge was refused, without enough evidence when the answer says so or nothing reached
    the context, else completed; ``needs_review`` instead when the review policy escalates it
    (:func:`~ragq.orchestration.flow.review.escalation_reasons`)."""
    draft = event.value
    assert isinstance(draft, DraftAnswer)
    request = event.call.request
    assert isinstance(request, SynthesizeRequest)
    first_row: dict[str, str] = {}
    for row in state.evidence:
        first_row.setdefault(row.item.chunk_id, row.id)
    by_chunk = {c.chunk_id: first_row[c.chunk_id] for c in request.context}
    stop_reason = str(event.call.context["stop_reason"])
    ran_out = exhausted_dimension(stop_reason) or state.first_refused
    if ran_out is not None:
        status, stop_reason = JobStatus.BUDGET_EXHAUSTED, budget_stop(ran_out)
    elif draft.insufficient or not request.context:
        status = JobStatus.INSUFFICIENT_EVIDENCE
    else:
        status = JobStatus.COMPLETED
    tokens = int(event.call.context["context_tokens"])
    review = escalation(state, draft, status)
    end = (FinishJob(JobStatus.NEEDS_REVIEW, stop_reason, tokens, review=review) if review
           else FinishJob(status, stop_reason, tokens))
    return [*settle(event), MarkInContext(tuple(by_chunk.values())),
            RecordAnswer(draft, by_chunk), end, SendWebhooks(), StartWaiting()]


def escalation(state: JobState, draft: DraftAnswer, outcome: JobStatus) -> Escalation | None:
    """The job's escalation to the review queue under its policy, None when it needs none."""
    reasons = escalation_reasons(
        policy=state.config.review, outcome=outcome, route=reviewed_route(state), draft=draft,
        tiers={e.item.chunk_id: e.item.authority_tier for e in state.evidence},
        confidences=[v.confidence for v in state.verifications])
    return Escalation(reasons, outcome) if reasons else None


def reviewed_route(state: JobState) -> str | None:
    """The route a job is judged by for review: a question's own; for a ticket, the widest
    route that at least half of its asks reach (took it or a wider one), its median route. A
    ticket of six routine needs and one investigative one is a routine ticket with one hard
    part (which searched and was verified on its wider route), not an investigation."""
    routes = [a.route for a in state.asks if a.route]
    if len(routes) <= 1:
        return state.route
    widest_first = sorted(routes, key=lambda r: ROUTE_ORDER.index(RoutePath(r)), reverse=True)
    return widest_first[(len(routes) + 1) // 2 - 1]


def on_step_failed(state: JobState, event: StepFailed) -> list[Action]:
    """A step that failed for good fails its job, with the error, and ends it."""
    return [*skip_unlaunched(state), FinishJob(JobStatus.FAILED, "error", error=event.error),
            SendWebhooks(), StartWaiting()]
