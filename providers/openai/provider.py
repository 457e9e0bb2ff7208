"""The OpenAI provider: every role over chat completions with structured output.

Each method pairs the role's prompt (:mod:`.prompts`), its wire model and conversion
(:mod:`.wire`) and its fallback, and hands them to :class:`~.calls.RoleCaller`. Fallbacks are
safe rather than clever: a single-shot plan, "not sufficient", the query's key terms, an empty
finding, and for the answer the offline provider's extractive synthesis (labelled extractive).
"""

from __future__ import annotations

from collections.abc import Sequence

from ragq.orchestration.sources import choose_sources
from ragq.providers.offline import reader as offline_reader
from ragq.providers.offline import reranker as offline_reranker
from ragq.providers.offline import rewriter as offline_rewriter
from ragq.providers.offline import synthesizer as offline_synthesizer
from ragq.providers.openai import prompts, wire
from ragq.providers.openai.calls import RoleCall, RoleCaller
from ragq.schemas.flow import (
    DraftAnswer,
    Evidence,
    Finding,
    ModelRole,
    Plan,
    PlannedSubQuery,
    QuestionClass,
    Ranking,
    Rewrite,
    RouteDecision,
    SourceChoice,
    SourceProfile,
    SufficiencyVerdict,
    TicketReading,
    Usage,
    Verification,
)
from ragq.schemas.metadata import MetadataField

NAME = "openai"


def _fallback_note(reason: str) -> str:
    return f"fallback ({reason})"


class OpenAIProvider:
    """A :class:`~providers.base.ModelProvider` over an OpenAI-compatible server.

    ``caller`` owns the client, the models per role, the prices and the retry policy; build one
    from settings with :func:`ragq.workers.wiring.build_provider`.
    """

    def __init__(self, caller: RoleCaller):
        self.caller = caller

    @property
    def name(self) -> str:
        return NAME

    def read_ticket(self, text: str) -> tuple[TicketReading, Usage]:
        """The ticket's asks, context and noise; falls back to the offline reader's rules."""
        return self.caller.run(RoleCall(
            ModelRole.TICKET_READER, prompts.read_ticket(text), wire.ReadingWire,
            wire.to_reading, lambda why: offline_reader.read_ticket(text)))

    def route(self, question: str) -> tuple[RouteDecision, Usage]:
        """The question's class; falls back to multi-hop, the path that verifies its answer."""
        return self.caller.run(RoleCall(
            ModelRole.ROUTER, prompts.route(question), wire.RouteWire, wire.to_route,
            lambda why: RouteDecision(question_class=QuestionClass.MULTI_HOP,
                                      reason=_fallback_note(why), confidence=0.0)))

    def route_sources(self, query: str, sources: Sequence[SourceProfile]
                      ) -> tuple[SourceChoice, Usage]:
        """The sources to search, only among those offered; falls back to the offline
        choice (lexical fit to the descriptions, plus past hits)."""
        offered = [s.name for s in sources]

        def fallback(why: str) -> SourceChoice:
            found = choose_sources(query, sources)
            return found.model_copy(update={"reason": f"{found.reason}; {_fallback_note(why)}"})

        return self.caller.run(RoleCall(
            ModelRole.SOURCE_ROUTER, prompts.route_sources(query, sources),
            wire.SourceChoiceWire, lambda w: wire.to_source_choice(w, offered), fallback))

    def plan(self, question: str, *, max_sub_queries: int, context: str = "",
             fields: Sequence[MetadataField] = ()) -> tuple[Plan, Usage]:
        """Sub-queries with dependencies; falls back to one sub-query, the question itself."""
        return self.caller.run(RoleCall(
            ModelRole.PLANNER, prompts.plan(question, max_sub_queries, context, fields),
            wire.plan_wire(tuple(f.name for f in fields)), wire.to_plan,
            lambda why: Plan(sub_queries=[PlannedSubQuery(text=question)],
                             reason=_fallback_note(why))))

    def check_sufficiency(self, sub_query: str, evidence: Sequence[Evidence], *,
                          found: Sequence[Evidence] = (), attempt: int = 0,
                          previous: Sequence[str] = ()) -> tuple[SufficiencyVerdict, Usage]:
        """One call: does everything ``found`` for the sub-query (``evidence``, its latest
        pass, when nothing else) answer it, the finding, and the rewrite when not. Falls back
        to "not sufficient", an empty finding and the offline rewriter's query."""
        read = tuple(found) or tuple(evidence)
        tried = tuple(previous) or (sub_query,)

        def fallback(why: str) -> SufficiencyVerdict:
            rewrite = offline_rewriter.rewrite(sub_query, read, attempt=attempt, previous=tried)
            return SufficiencyVerdict(sufficient=False, score=0.0, reason=_fallback_note(why),
                                      finding=Finding(text="", reason=_fallback_note(why)),
                                      rewrite=rewrite)

        return self.caller.run(RoleCall(
            ModelRole.SUFFICIENCY, prompts.sufficiency(sub_query, read, tried),
            wire.SufficiencyWire, lambda w: wire.to_sufficiency(w, read, tried), fallback))

    def rewrite(self, sub_query: str, evidence: Sequence[Evidence], *, attempt: int,
                previous: Sequence[str]) -> tuple[Rewrite, Usage]:
        """A new query; falls back to the offline rewriter (key terms first, never a repeat)."""
        def fallback(why: str) -> Rewrite:
            found = offline_rewriter.rewrite(sub_query, evidence, attempt=attempt,
                                             previous=previous)
            return found.model_copy(update={"reason": f"{found.reason}; {_fallback_note(why)}"})

        return self.caller.run(RoleCall(
            ModelRole.REWRITER, prompts.rewrite(sub_query, evidence, previous),
            wire.RewriteWire, wire.to_rewrite, fallback))

    def find(self, sub_query: str, evidence: Sequence[Evidence]) -> tuple[Finding, Usage]:
        """The bare fact the evidence gives; falls back to an empty finding."""
        return self.caller.run(RoleCall(
            ModelRole.FINDER, prompts.find(sub_query, evidence), wire.FindingWire,
            lambda w: wire.to_finding(w, evidence),
            lambda why: Finding(text="", reason=_fallback_note(why))))

    def verify(self, question: str, evidence: Sequence[Evidence], *, findings: Sequence[str],
               missing: Sequence[str] = ()) -> tuple[Verification, Usage]:
        """Whether the evidence answers the question, follow-ups first for the contract's
        ``missing`` keys; falls back to "not sufficient", 0."""
        return self.caller.run(RoleCall(
            ModelRole.VERIFIER, prompts.verify(question, evidence, findings, missing),
            wire.VerificationWire, wire.to_verification,
            lambda why: Verification(sufficient=False, confidence=0.0,
                                     reason=_fallback_note(why))))

    def rerank(self, question: str, candidates: Sequence[Evidence], *,
               asks: Sequence[str] = ()) -> tuple[Ranking, Usage]:
        """A listwise ranking of the pooled evidence; falls back to the offline scorer."""
        return self.caller.run(RoleCall(
            ModelRole.RERANKER, prompts.rerank(question, candidates, asks), wire.RankingWire,
            lambda w: wire.to_ranking(w, candidates),
            lambda why: offline_reranker.rerank(question, candidates, asks)))

    def synthesize(self, question: str, context: Sequence[Evidence], *, strategy: str,
                   findings: Sequence[str], asks: Sequence[str] = (),
                   chain_ends: Sequence[str] = ()) -> tuple[DraftAnswer, Usage]:
        """A written answer citing context chunks (one per ask of a ticket); falls back to the
        offline extractive one."""
        if asks:
            return self.caller.run(RoleCall(
                ModelRole.SYNTHESIZER, prompts.synthesize(question, context, strategy, findings,
                                                          asks),
                wire.TicketDraftWire, lambda w: wire.to_ticket_draft(w, asks, context),
                lambda why: offline_synthesizer.synthesize(
                    question, context, strategy=strategy, findings=findings, asks=asks)))
        return self.caller.run(RoleCall(
            ModelRole.SYNTHESIZER,
            prompts.synthesize(question, context, strategy, findings, chain_ends=chain_ends),
            wire.DraftWire, lambda w: wire.to_draft(w, context),
            lambda why: offline_synthesizer.synthesize(question, context, strategy=strategy,
                                                       findings=findings,
                                                       chain_ends=chain_ends)))
