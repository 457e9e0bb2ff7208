"""What a decision reads: a job's state as the ledger holds it at the start of a step, and the
settings that shape the flow.

A snapshot is immutable and complete for the flow's decisions; loading it is the ledger's job
(:mod:`ragq.ledger.flow_state` for SQL, :mod:`ragq.ledger.memory` in process), so the same
decisions run against either.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from ragq.orchestration.context import FOLLOW_UP_SLOTS, estimate_tokens
from ragq.orchestration.flow.review import ReviewPolicy
from ragq.orchestration.windows import TICKET_WINDOW
from ragq.schemas.flow import Evidence, Plan, QuestionClass, SourceProfile, Strategy
from ragq.schemas.metadata import MetadataSchema
from ragq.schemas.search import SearchRequest
from ragq.schemas.statuses import (
    TERMINAL_JOB_STATUSES,
    BudgetDimension,
    JobStatus,
    SubQueryOrigin,
    SubQueryStatus,
)
from ragq.schemas.ticket import BudgetProfiles, Priority

#: The reason of an ask's search of its own whole text, beside its plan's parts.
WHOLE_QUESTION = "the whole question, searched beside its parts"

Amount = int | Decimal


@dataclass(frozen=True)
class FlowConfig:
    """The settings a decision reads, as plain values (orchestration never reads settings).

    ``count_tokens`` counts context tokens the way the answer model will (the runner passes the
    real BPE counter; the estimate is for tests). ``question_scores``: whether each search also
    scores the job's question against its hits (``Evidence.question_score``), for a verifier
    that reads them (the offline one, the local reranker). ``local_roles``: the roles played
    in process without a model (``DecideLocally``)."""

    min_confidence: float = 0.7
    search_top_k: int = 5
    context_max_chunks: int = 8
    context_max_tokens: int = 1500
    ticket_max_asks: int = 6
    dedup_enabled: bool = True
    near_duplicate_similarity: float = 0.92
    adaptive_expansion: bool = True
    expansion_min_top_score: float = 0.45
    expansion_min_margin: float = 0.0
    budgets_enabled: bool = True
    budget_profiles: BudgetProfiles | None = None
    retrieval_call_usd: Decimal = Decimal(0)
    rerank_call_usd: Decimal = Decimal(0)
    embedding_per_mtok_usd: Decimal = Decimal(0)
    question_scores: bool = True
    local_roles: frozenset[str] = frozenset({"router", "reranker"})
    contract_stops_plans: bool = False  # a met contract of several sub-queries ends the loop
    lean_checks: bool = True  # a check that cannot steer the job is decided locally
    review: ReviewPolicy = field(default_factory=ReviewPolicy)
    search: SearchRequest = field(default_factory=SearchRequest)  # mode and fusion; no terms
    count_tokens: Callable[[str], int] = field(default=estimate_tokens, compare=False)


@dataclass(frozen=True)
class BudgetState:
    """The job's budget row: limits (None: unlimited) and what was spent, per dimension, and the
    first dimension any charge of the job was refused on."""

    profile: str | None
    limits: Mapping[BudgetDimension, Amount | None]
    used: Mapping[BudgetDimension, Amount]
    first_refused: BudgetDimension | None = None

    def remaining(self, dimension: BudgetDimension) -> Amount | None:
        """What is left of ``dimension``; None when it is unlimited."""
        limit = self.limits.get(dimension)
        if limit is None:
            return None
        return max(type(limit)(0), limit - self.used.get(dimension, 0))


@dataclass(frozen=True)
class AskState:
    """One ask of the job (a plain question is a job of one ask): its text, route and plan."""

    index: int
    text: str
    route: str | None = None
    question_class: QuestionClass | None = None
    route_reason: str = ""
    plan: Plan | None = None
    plan_cache_hit: bool = False

    @property
    def routed(self) -> bool:
        return self.route is not None


@dataclass(frozen=True)
class SubQueryState:
    """One sub-query: planned text, what was searched, where it stands."""

    id: str
    round: int
    index: int
    text: str
    depends_on: tuple[int, ...] = ()
    final_text: str | None = None
    status: SubQueryStatus = SubQueryStatus.PENDING
    finding: str | None = None
    alternatives: tuple[str, ...] = ()  # other candidates of the finding, best first
    origin: SubQueryOrigin = SubQueryOrigin.PLAN
    ask: int | None = None
    sources: tuple[str, ...] = ()  # where the source router sent it (empty: not routed)
    reason: str = ""  # why it exists, as planned

    @property
    def is_ticket_window(self) -> bool:
        """A search of a window of the whole ticket: the floor, not an ask's own search."""
        return self.reason == TICKET_WINDOW

    @property
    def is_insurance(self) -> bool:
        """A search of a whole ask beside its parts, or of a window of the ticket: no part of
        what the plan requires (no key of its evidence contract)."""
        return self.is_ticket_window or self.reason == WHOLE_QUESTION

    @property
    def searched_text(self) -> str:
        """The text the latest attempt searched (the planned text before any search)."""
        return self.final_text or self.text

    @property
    def slot(self) -> int:
        """Its group for context diversity: each plan sub-query has one; a verify round's
        follow-ups share one, so many follow-ups cannot crowd the plan's evidence out."""
        return self.index if self.round == 0 else self.round * FOLLOW_UP_SLOTS


@dataclass(frozen=True)
class RequestState:
    """One retrieval request (one attempt of one sub-query)."""

    id: str
    sub_query_id: str | None
    attempt: int
    query: str
    key: str
    top_k: int
    dedup_of: str | None = None
    cache_hit: bool = False
    sources: tuple[str, ...] = ()  # the collections it searched (empty: the job's one)
    filters: str = ""  # its metadata filters' label (``metadata_filters.filters_label``)

    @property
    def searched(self) -> bool:
        """Whether this request reached the vector store (neither deduplicated nor cached)."""
        return self.dedup_of is None and not self.cache_hit


@dataclass(frozen=True)
class EvidenceState:
    """One evidence row: the chunk, and which request and sub-query found it."""

    id: str
    request_id: str
    sub_query_id: str | None
    item: Evidence


@dataclass(frozen=True)
class VerificationState:
    """One verifier verdict, with the evidence its round brought that no earlier round had."""

    round: int
    sufficient: bool
    confidence: float
    new_evidence: int
    reason: str = ""  # the verifier's, or the evidence contract's check that ended the loop


@dataclass(frozen=True)
class JobState:
    """A job as the ledger holds it at the start of a step; ``config`` is how the flow is set.
    ``sources`` are the collections the job may search (with their descriptions and past hits)
    when it names any; without, it searches ``collection`` alone."""

    job_id: str
    question: str
    collection: str
    acl: tuple[str, ...]
    status: JobStatus
    config: FlowConfig
    route: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    batch_budget: Mapping[str, Any] | None = None
    budget: BudgetState | None = None
    read: bool = False
    ticket_context: str = ""
    asks: tuple[AskState, ...] = ()
    plan: Plan | None = None
    strategy: Strategy | None = None
    sub_queries: tuple[SubQueryState, ...] = ()
    requests: tuple[RequestState, ...] = ()
    evidence: tuple[EvidenceState, ...] = ()
    verifications: tuple[VerificationState, ...] = ()
    sources: tuple[SourceProfile, ...] = ()
    #: The metadata schema of each searchable collection that declares one (issue 37); a
    #: collection without one is never searched with metadata filters.
    schemas: Mapping[str, MetadataSchema] = field(default_factory=dict)
    #: ``interactive`` or ``bulk`` (docs/fair-share.md#priority): the broker priority its steps
    #: are sent with, so an interactive job's steps go ahead of a bulk backlog's.
    priority: Priority = Priority.BULK

    @property
    def ended(self) -> bool:
        """Whether the job already ended (completed, failed, cancelled …): do nothing more."""
        return self.status in TERMINAL_JOB_STATUSES

    @property
    def searchable(self) -> tuple[str, ...]:
        """The collections the job may search: its sources, else its one collection."""
        return tuple(s.name for s in self.sources) or (self.collection,)

    @property
    def routes_sources(self) -> bool:
        """Whether each sub-query is sent to its source(s): the job may search several."""
        return len(self.sources) > 1

    def ask(self, index: int) -> AskState:
        """Ask ``index``; raises KeyError when the job has none (it was not read yet)."""
        for ask in self.asks:
            if ask.index == index:
                return ask
        raise KeyError(f"job {self.job_id} has no ask {index}")

    def ask_text(self, index: int | None) -> str:
        """What ask ``index`` asks; the whole of what the job asks for None (a follow-up)."""
        return self.ask(index).text if index is not None and self.asks else self.asked

    @property
    def context_shares(self) -> int:
        """How many shares the answer's context has: one per ask of the job, and one more for
        a ticket's floor (its whole text, searched as one more ask)."""
        floor = any(s.is_ticket_window for s in self.sub_queries)
        return max(1, len(self.asks)) + int(floor)

    @property
    def context_items(self) -> int:
        """The most chunks the answer's context holds: a share's worth per share."""
        return self.config.context_max_chunks * self.context_shares

    @property
    def planned_keys(self) -> list[SubQueryState]:
        """The round-0 sub-queries the plans require, one key each of the evidence contract
        (the searches of whole asks and ticket windows are insurance, not requirements)."""
        return [s for s in self.round_sub_queries(0) if not s.is_insurance]

    @property
    def asked(self) -> str:
        """What the job asks, without the ticket's noise: its asks, one per line (the question
        itself before the job was read)."""
        return "\n".join(a.text for a in self.asks) if self.asks else self.question

    def sub_query(self, round_: int, index: int) -> SubQueryState:
        """The sub-query at (round, index); raises KeyError when the ledger has none."""
        for sq in self.sub_queries:
            if sq.round == round_ and sq.index == index:
                return sq
        raise KeyError(f"job {self.job_id} has no sub-query {round_}.{index}")

    def round_sub_queries(self, round_: int) -> list[SubQueryState]:
        """The sub-queries of one round, in index order."""
        return sorted((s for s in self.sub_queries if s.round == round_), key=lambda s: s.index)

    def request(self, sub_query_id: str, attempt: int) -> RequestState | None:
        """The request of one attempt of a sub-query, if it was recorded."""
        return next((r for r in self.requests
                     if r.sub_query_id == sub_query_id and r.attempt == attempt), None)

    def evidence_of(self, *, request_id: str | None = None, sub_query_id: str | None = None,
                    slot: int | None = None) -> list[Evidence]:
        """The evidence of one request or one sub-query (all when neither is given), oldest
        request first, best rank first, tagged with ``slot`` as its sub-query index and with
        the ask its sub-query serves."""
        asks = {s.id: s.ask for s in self.sub_queries}
        return [e.item.model_copy(update={"sub_query_index": slot,
                                          "ask_index": asks.get(e.sub_query_id or "")})
                for e in self.evidence
                if (request_id is None or e.request_id == request_id)
                and (sub_query_id is None or e.sub_query_id == sub_query_id)]

    @property
    def findings(self) -> list[str]:
        """What the sub-queries found, in (round, index) order."""
        ordered = sorted(self.sub_queries, key=lambda s: (s.round, s.index))
        return [s.finding for s in ordered if s.finding]

    @property
    def chain_ends(self) -> list[str]:
        """The last hop of each chain of the plan, as it was searched (its placeholders
        filled): what each part of a compound question, or a nested question, finally asks.
        A search of the whole question is no part of it."""
        planned = [s for s in self.sub_queries if s.round == 0 and not s.is_ticket_window]
        depended = {i for s in planned for i in s.depends_on}
        return [s.searched_text for s in sorted(planned, key=lambda s: s.index)
                if s.index not in depended and s.text.strip() != self.asked.strip()]

    @property
    def answered_hops(self) -> dict[int, str]:
        """The slots of the sub-queries whose finding a later hop of their round searched
        with (the bridges of the chains the job followed), each with the text it searched."""
        return {s.slot: s.searched_text for s in self.sub_queries if s.finding
                and any(o.round == s.round and s.index in o.depends_on
                        for o in self.sub_queries)}

    @property
    def first_refused(self) -> BudgetDimension | None:
        """The first dimension the job's budget refused, if any did."""
        return self.budget.first_refused if self.budget else None
