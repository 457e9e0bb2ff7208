"""What the model is asked to return, per role, and how that becomes the role's contract.

OpenAI's strict structured output wants every field required, no defaults, no extra keys and
no numeric bounds, so each role has a *wire* model of that shape; ``to_*`` converts it to the
:mod:`schemas.flow` type the offline provider returns too, clamping numbers and refusing what
the schema cannot say (an empty plan, a citation of a chunk that was not in the context).
A ``ValueError`` raised here is shown to the model in the one repair attempt.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, create_model

from ragq.orchestration.conflicts import about_one_subject
from ragq.schemas.flow import (
    FINDING_ALTERNATIVES,
    Ask,
    AskAnswer,
    ChunkScore,
    Citation,
    Contradiction,
    DraftAnswer,
    Evidence,
    Finding,
    Plan,
    PlannedSubQuery,
    QuestionClass,
    Ranking,
    Rewrite,
    RouteDecision,
    SourceChoice,
    Strategy,
    SufficiencyVerdict,
    TicketReading,
    Verification,
)
from ragq.schemas.metadata import FilterOp


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AskWire(_Wire):
    text: str
    reason: str


class ReadingWire(_Wire):
    asks: list[AskWire]
    context: str
    noise: list[str]


class RouteWire(_Wire):
    question_class: QuestionClass
    reason: str
    confidence: float


class SourceScoreWire(_Wire):
    name: str
    score: float


class SourceChoiceWire(_Wire):
    sources: list[str]
    scores: list[SourceScoreWire]
    reason: str


class SubQueryWire(_Wire):
    text: str
    depends_on: list[int]
    reason: str


class PlanWire(_Wire):
    sub_queries: list[SubQueryWire]
    strategy: Strategy
    reason: str


class FilterWire(_Wire):
    """A metadata filter a planner proposes; ``field`` is narrowed to the source's declared
    names by :func:`plan_wire`."""

    field: str
    op: FilterOp
    values: list[str]


class FilteredSubQueryWire(SubQueryWire):
    filters: list[FilterWire]


class FilteredPlanWire(_Wire):
    sub_queries: list[FilteredSubQueryWire]
    strategy: Strategy
    reason: str


@functools.cache
def plan_wire(fields: tuple[str, ...]) -> type[PlanWire] | type[FilteredPlanWire]:
    """The planner's answer: a plain plan, or, when the searched source declares metadata
    fields, a plan whose sub-queries may carry filters whose ``field`` the strict schema
    restricts to those names (a model cannot name a field the source does not have)."""
    if not fields:
        return PlanWire
    # The field names are known at run time only: a Literal built from them, for pydantic.
    named_field: Any = Literal.__getitem__(fields)
    named = create_model("NamedFilterWire", __base__=FilterWire, field=(named_field, ...))
    sub = create_model("NamedSubQueryWire", __base__=FilteredSubQueryWire,
                       filters=(list[named], ...))
    return create_model("NamedPlanWire", __base__=FilteredPlanWire,
                        sub_queries=(list[sub], ...))


class CheckFindingWire(_Wire):
    text: str
    doc_ids: list[str]
    alternatives: list[str]


class SufficiencyWire(_Wire):
    """The merged check: the verdict, the finding, and (when not sufficient) the rewrite."""

    sufficient: bool
    score: float
    missing_terms: list[str]
    reason: str
    finding: CheckFindingWire
    rewrite: str


class RewriteWire(_Wire):
    text: str
    reason: str


class FindingWire(_Wire):
    text: str
    doc_ids: list[str]
    reason: str
    alternatives: list[str]


class VerificationWire(_Wire):
    sufficient: bool
    confidence: float
    missing_info: list[str]
    follow_up_queries: list[str]
    reason: str


class RankingWire(_Wire):
    ranked: list[str]
    reason: str


class CitationWire(_Wire):
    chunk_id: str
    quote: str


class ContradictionWire(_Wire):
    topic: str
    statements: list[str]
    doc_ids: list[str]
    chunk_ids: list[str]
    subjects: list[str]
    reason: str


class DraftWire(_Wire):
    answer: str
    citations: list[CitationWire]
    contradictions: list[ContradictionWire]
    insufficient: bool


class AskAnswerWire(_Wire):
    index: int
    answer: str
    citations: list[CitationWire]
    insufficient: bool


class TicketDraftWire(_Wire):
    answers: list[AskAnswerWire]
    contradictions: list[ContradictionWire]


@functools.cache
def strict_schema(wire: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of ``wire`` as strict mode requires it: every object closed and every
    property required (pydantic already does both for these models; this makes sure).

    Cached (building it costs about 0.2 ms, as much as a loopback request): treat it as
    read-only."""
    schema = wire.model_json_schema()
    _close(schema)
    for definition in schema.get("$defs", {}).values():
        _close(definition)
    return schema


def _close(node: Any) -> None:
    if isinstance(node, dict):
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
            node["required"] = list(node["properties"])
        for value in node.values():
            _close(value)
    elif isinstance(node, list):
        for value in node:
            _close(value)


def _unit(value: float) -> float:
    return min(max(value, 0.0), 1.0)


def to_reading(w: ReadingWire) -> TicketReading:
    asks = [Ask(text=a.text.strip(), reason=a.reason) for a in w.asks if a.text.strip()]
    if not asks:
        raise ValueError("the reading has no ask: give at least one question or request the "
                         "ticket makes (the whole ticket's point, if nothing else)")
    return TicketReading(asks=asks, context=w.context.strip(), noise=w.noise)


def to_route(w: RouteWire) -> RouteDecision:
    return RouteDecision(question_class=w.question_class, reason=w.reason,
                         confidence=_unit(w.confidence))


def to_source_choice(w: SourceChoiceWire, offered: Sequence[str]) -> SourceChoice:
    """The sources the model chose, each one it was offered; a name it was not offered is
    refused (the repair attempt shows the model the valid names)."""
    unknown = [name for name in w.sources if name not in offered]
    if unknown or not w.sources:
        raise ValueError(f"sources must name one or more of {', '.join(offered)}; "
                         f"got {', '.join(w.sources) or 'none'}")
    return SourceChoice(sources=list(dict.fromkeys(w.sources)),
                        scores={s.name: _unit(s.score) for s in w.scores if s.name in offered},
                        reason=w.reason)


def to_plan(w: PlanWire | FilteredPlanWire) -> Plan:
    """The plan as proposed; ``orchestration.plan.validate_plan`` repairs its graph later, and
    each search validates a sub-query's filters against the source's schema."""
    subs = [PlannedSubQuery(text=s.text.strip(), depends_on=s.depends_on, reason=s.reason,
                            filters=[_filter(f) for f in getattr(s, "filters", ())])
            for s in w.sub_queries if s.text.strip()]
    if not subs:
        raise ValueError("the plan has no sub-query: give at least one non-empty sub_queries item")
    return Plan(sub_queries=subs, strategy=w.strategy, reason=w.reason)


def _filter(w: FilterWire) -> dict[str, Any]:
    """A proposed filter in the contract's shape: a list for ``in``, one value otherwise."""
    values = list(w.values)
    return {"field": w.field, "op": w.op.value,
            "value": values if w.op is FilterOp.IN else (values[0] if values else "")}


def to_sufficiency(w: SufficiencyWire, evidence: Sequence[Evidence],
                   previous: Sequence[str]) -> SufficiencyVerdict:
    """The merged verdict. Not sufficient, it must carry a rewrite that differs from every query
    already tried (the repair attempt says so); sufficient, a rewrite is dropped."""
    finding = to_finding(FindingWire(text=w.finding.text, doc_ids=w.finding.doc_ids,
                                     reason=w.reason, alternatives=w.finding.alternatives),
                         evidence)
    rewrite = None
    if not w.sufficient:
        tried = {" ".join(q.casefold().split()) for q in previous}
        text = w.rewrite.strip()
        if not text or " ".join(text.casefold().split()) in tried:
            raise ValueError("not sufficient, so rewrite must be a new search query that differs "
                             "from every query already tried")
        rewrite = Rewrite(text=text, reason=w.reason)
    return SufficiencyVerdict(sufficient=w.sufficient, score=_unit(w.score),
                              missing_terms=w.missing_terms, reason=w.reason,
                              finding=finding, rewrite=rewrite)


def to_rewrite(w: RewriteWire) -> Rewrite:
    if not w.text.strip():
        raise ValueError("the rewritten query is empty: give a non-empty text")
    return Rewrite(text=w.text.strip(), reason=w.reason)


def to_finding(w: FindingWire, evidence: Sequence[Evidence]) -> Finding:
    """Doc ids the evidence does not hold are dropped: a finding cannot point elsewhere.
    Alternatives are kept stripped, without blanks, repeats or the finding itself, at most
    :data:`~schemas.flow.FINDING_ALTERNATIVES`; none without a finding (there is nothing to be
    second to)."""
    known = {e.doc_id for e in evidence}
    text = w.text.strip()
    others = [a.strip() for a in w.alternatives]
    kept = list(dict.fromkeys(a for a in others if a and a.casefold() != text.casefold()))
    return Finding(text=text, doc_ids=[d for d in w.doc_ids if d in known], reason=w.reason,
                   alternatives=kept[:FINDING_ALTERNATIVES] if text else [])


def to_verification(w: VerificationWire) -> Verification:
    return Verification(sufficient=w.sufficient, confidence=_unit(w.confidence),
                        missing_info=w.missing_info, follow_up_queries=w.follow_up_queries,
                        reason=w.reason)


def _citations(cited: Sequence[CitationWire], context: Sequence[Evidence], insufficient: bool,
               what: str) -> list[Citation]:
    """Citations of context chunks only; an answer that claims something cites something."""
    by_chunk = {e.chunk_id: e for e in context}
    unknown = [c.chunk_id for c in cited if c.chunk_id not in by_chunk]
    if unknown:
        raise ValueError(f"citations name chunks that are not in the context: {unknown}; "
                         f"cite only these chunk_id values: {sorted(by_chunk)}")
    if not insufficient and not cited:
        raise ValueError(f"{what} cites nothing: cite the chunk_id of every piece of context "
                         "it rests on, or set insufficient to true")
    return [Citation(doc_id=by_chunk[c.chunk_id].doc_id, chunk_id=c.chunk_id,
                     quote=c.quote.strip() or None) for c in cited]


def _contradictions(found: Sequence[ContradictionWire], context: Sequence[Evidence]
                    ) -> list[Contradiction]:
    """The reported contradictions whose sides are about one subject
    (:func:`~ragq.orchestration.conflicts.about_one_subject`, the rule the offline detector
    follows too); ids the context does not hold are dropped. Subjects that do not pair one to
    one with the statements say nothing and are left out."""
    known_docs = {e.doc_id for e in context}
    known_chunks = {e.chunk_id for e in context}
    return about_one_subject(
        Contradiction(topic=c.topic, statements=c.statements,
                      doc_ids=[d for d in c.doc_ids if d in known_docs],
                      chunk_ids=[k for k in c.chunk_ids if k in known_chunks],
                      subjects=c.subjects if len(c.subjects) == len(c.statements) else [],
                      reason=c.reason)
        for c in found)


def to_ranking(w: RankingWire, candidates: Sequence[Evidence]) -> Ranking:
    """Listed chunks score above every unlisted one (2 down to 1, in the model's order); an
    unlisted chunk keeps its retrieval score. Ids the candidates do not hold are refused."""
    known = {e.chunk_id for e in candidates}
    unknown = [c for c in w.ranked if c not in known]
    if unknown:
        raise ValueError(f"ranked names chunks that are not candidates: {unknown}; rank only "
                         f"these chunk_id values: {sorted(known)}")
    order = list(dict.fromkeys(w.ranked))
    scores = [ChunkScore(chunk_id=c, score=2.0 - i / max(1, len(order)))
              for i, c in enumerate(order)]
    return Ranking(scores=scores, reason=w.reason)


def to_draft(w: DraftWire, context: Sequence[Evidence]) -> DraftAnswer:
    """A model-written (not extractive) answer whose every citation names a context chunk."""
    return DraftAnswer(answer=w.answer.strip(),
                       citations=_citations(w.citations, context, w.insufficient, "the answer"),
                       contradictions=_contradictions(w.contradictions, context),
                       extractive=False, insufficient=w.insufficient)


def to_ticket_draft(w: TicketDraftWire, asks: Sequence[str], context: Sequence[Evidence]
                    ) -> DraftAnswer:
    """One answer per ask, in order, each citing context chunks only."""
    if sorted(a.index for a in w.answers) != list(range(len(asks))):
        raise ValueError(f"answers must hold exactly one item per ask, indexes 0 to "
                         f"{len(asks) - 1}")
    answers = [AskAnswer(index=a.index, answer=a.answer.strip(), insufficient=a.insufficient,
                         citations=_citations(a.citations, context, a.insufficient,
                                              f"the answer to ask {a.index}"))
               for a in sorted(w.answers, key=lambda a: a.index)]
    text = "\n\n".join(f"{a.index + 1}. {asks[a.index]}\n{a.answer}" for a in answers)
    return DraftAnswer(answer=text, citations=[c for a in answers for c in a.citations],
                       contradictions=_contradictions(w.contradictions, context),
                       extractive=False, insufficient=all(a.insufficient for a in answers),
                       asks=answers)
