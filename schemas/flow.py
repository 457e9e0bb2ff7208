"""What the model roles return (the same schemas for the offline and the openai provider), and
the evidence they read."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

from ragq.schemas.statuses import ModelCallStatus


class QuestionClass(StrEnum):
    """The router's classes."""

    SIMPLE_FACT = "simple_fact"
    PROCEDURAL = "procedural"
    MULTI_HOP = "multi_hop"
    INVESTIGATIVE = "investigative"


class ModelRole(StrEnum):
    """The roles a model provider plays, as the ledger's ``model_calls.role`` names them."""

    TICKET_READER = "ticket_reader"
    ROUTER = "router"
    SOURCE_ROUTER = "source_router"
    PLANNER = "planner"
    SUFFICIENCY = "sufficiency"
    REWRITER = "rewriter"
    FINDER = "finder"
    VERIFIER = "verifier"
    RERANKER = "reranker"
    SYNTHESIZER = "synthesizer"


class RoleModels(RootModel[dict[ModelRole, str]]):
    """Which model plays which role, where it differs from the default (JSON in settings:
    ``{"synthesizer": "gpt-4o"}``). Hashable, so the settings holding it stay hashable."""

    model_config = ConfigDict(frozen=True)
    root: dict[ModelRole, str] = Field(default_factory=dict)

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.root.items())))

    def for_role(self, role: ModelRole | str, default: str) -> str:
        """The model of ``role``; ``default`` when no override names it."""
        return self.root.get(ModelRole(role), default)


class Strategy(StrEnum):
    """How the synthesizer combines the sub-queries' findings."""

    SINGLE = "single"  # one sub-query answers the question
    CHAIN = "chain"  # each hop feeds the next; the last hop answers
    COMPARE = "compare"  # parallel facts about several entities, then a comparison
    AGGREGATE = "aggregate"  # parallel parts of a compound question, answered together


class _Contract(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Ask(_Contract):
    """One question or request a ticket contains, phrased to stand on its own."""

    text: str = Field(min_length=1)
    reason: str = ""


class TicketReading(_Contract):
    """Ticket reader output: the asks, what the ticket says about who asks and their setup
    (``context``: for the planner, never searched as a question), and what was set aside as
    noise (greetings, signatures, pasted logs and configuration)."""

    asks: list[Ask] = Field(min_length=1)
    context: str = ""
    noise: list[str] = Field(default_factory=list)


class RouteDecision(_Contract):
    """Router output: the class of the question and why."""

    question_class: QuestionClass
    reason: str = ""
    confidence: float = Field(0.5, ge=0.0, le=1.0)


class SourceProfile(_Contract):
    """A source a sub-query may be sent to: its name (a collection), what its registered
    description says it holds, and how often its chunks reached an answer before (``hits``,
    the prior from the ledger)."""

    name: str = Field(min_length=1)
    description: str = ""
    hits: int = Field(0, ge=0)


class SourceChoice(_Contract):
    """The source router's choice for one sub-query: the sources to search (best first), the
    score it gave each offered source, and why."""

    sources: list[str] = Field(min_length=1)
    scores: dict[str, float] = Field(default_factory=dict)
    reason: str = ""


class PlannedSubQuery(_Contract):
    """One atomic sub-query. ``text`` may hold ``{0}``-style placeholders naming earlier
    sub-queries by index; they are replaced by those sub-queries' findings before retrieval."""

    text: str
    depends_on: list[int] = Field(default_factory=list)
    reason: str = ""
    #: Metadata filters a model planner proposed for it ({field, op, value}), as proposed:
    #: validated against the searched source's schema at each search, like the rules'.
    filters: list[dict[str, Any]] = Field(default_factory=list)


class Plan(_Contract):
    """Planner output: sub-queries (a DAG through ``depends_on``) and a synthesis strategy."""

    sub_queries: list[PlannedSubQuery]
    strategy: Strategy = Strategy.SINGLE
    reason: str = ""


class Evidence(_Contract):
    """One retrieved chunk as the roles see it."""

    chunk_id: str
    doc_id: str
    title: str = ""
    text: str
    score: float
    #: The cosine of the query that found it with the chunk's stored text vector (None where
    #: the store did not report it): a check of that query's evidence reads its similarity
    #: here instead of embedding the texts again.
    text_score: float | None = None
    #: The cosine of the job's whole question (what the verifier is asked) with the chunk's
    #: stored text vector, from the search that found it (None where none was computed, and
    #: for evidence served from the evidence cache, which other jobs' questions filled): the
    #: offline verifier reads it instead of embedding the texts again.
    question_score: float | None = None
    source_version: str = ""
    authority_tier: int = 2
    sub_query_index: int | None = None
    ask_index: int | None = None
    source: str = ""  # the collection (source) the chunk was found in




class Rewrite(_Contract):
    """A new query for the same need, from a different angle."""

    text: str
    reason: str = ""


#: Runners-up a finding passes on to its dependents, whichever provider found it: each is a
#: further search of a dependent hop, so a few, best first.
FINDING_ALTERNATIVES = 2


class Finding(_Contract):
    """What a sub-query found, in a few words, to substitute into dependent sub-queries."""

    text: str
    doc_ids: list[str] = Field(default_factory=list)
    reason: str = ""
    #: Other answers the evidence supports, best first: a dependent sub-query that finds
    #: nothing with ``text`` searches again with the next of these.
    alternatives: list[str] = Field(default_factory=list, max_length=5)


class SufficiencyVerdict(_Contract):
    """Does this evidence answer this sub-query?. One verdict holds what the check
    settles in one call: the ``finding`` its dependents substitute (and the verifier reads),
    and, when not sufficient, the ``rewrite`` to search next. None where the call gave none."""

    sufficient: bool
    score: float = Field(0.0, ge=0.0, le=1.0)
    missing_terms: list[str] = Field(default_factory=list)
    reason: str = ""
    finding: Finding | None = None
    rewrite: Rewrite | None = None

    @property
    def roles(self) -> str:
        """The roles this one call played, as the ledger's ``model_calls.role`` names them."""
        played = [ModelRole.SUFFICIENCY, *([ModelRole.FINDER] if self.finding else []),
                  *([ModelRole.REWRITER] if self.rewrite else [])]
        return "+".join(r.value for r in played)


class Verification(_Contract):
    """Verifier output."""

    sufficient: bool
    confidence: float = Field(0.0, ge=0.0, le=1.0)
    missing_info: list[str] = Field(default_factory=list)
    follow_up_queries: list[str] = Field(default_factory=list)
    reason: str = ""


class ChunkScore(_Contract):
    """How well one retrieved chunk serves the question, on the reranker's scale (higher is
    better; comparable within one ranking only)."""

    chunk_id: str
    score: float


class Ranking(_Contract):
    """Reranker output: a score for chunks of the job's pooled evidence. A chunk left out keeps
    its retrieval score, below every chunk the ranking lists."""

    scores: list[ChunkScore] = Field(default_factory=list)
    reason: str = ""


class Citation(_Contract):
    """A piece of evidence an answer rests on."""

    doc_id: str
    chunk_id: str
    quote: str | None = None


class Contradiction(_Contract):
    """Two pieces of evidence that disagree about the same thing."""

    topic: str
    statements: list[str]
    doc_ids: list[str]
    chunk_ids: list[str] = Field(default_factory=list)  # the chunk of each statement, in order
    #: What each statement is about (product, plan, policy or entity), in order; "" where it
    #: names nothing particular. Sides about different subjects are no contradiction
    #: (``orchestration.conflicts``).
    subjects: list[str] = Field(default_factory=list)
    reason: str = ""


class AskAnswer(_Contract):
    """The answer to one ask of a ticket, with the evidence it rests on."""

    index: int
    answer: str
    citations: list[Citation] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)
    insufficient: bool = False


class DraftAnswer(_Contract):
    """Synthesizer output. ``extractive`` marks answers stitched from evidence sentences;
    ``insufficient`` means the evidence does not support an answer. A ticket of several asks
    gets ``asks``, one answer each, in order; ``answer`` and ``citations`` then cover them all."""

    answer: str
    citations: list[Citation] = Field(default_factory=list)
    contradictions: list[Contradiction] = Field(default_factory=list)
    extractive: bool = False
    insufficient: bool = False
    asks: list[AskAnswer] = Field(default_factory=list)


class CallAttempt(_Contract):
    """One request of a role call (or its fallback), metered on its own: a failed attempt costs
    what the server charged for it. ``backoff_s`` is the pause taken after it, before the next."""

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    status: ModelCallStatus = ModelCallStatus.OK
    error: str | None = None
    backoff_s: float = 0.0


class Usage(_Contract):
    """What one role call cost, summed over its attempts.

    ``attempts`` lists every request (empty for providers that make none, like the offline one);
    ``fallback_reason`` says why a fallback answered instead of the model, when one did.
    """

    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    attempts: list[CallAttempt] = Field(default_factory=list)
    fallback_reason: str | None = None
