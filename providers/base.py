"""The model provider interface: one method per role.

Every method returns its pydantic contract and the :class:`Usage` of the call, so the caller can
charge the budget and write the ledger whatever the provider.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ragq.schemas.flow import (
    DraftAnswer,
    Evidence,
    Finding,
    Plan,
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


class ModelProvider(Protocol):
    """The roles of the agentic flow."""

    @property
    def name(self) -> str:
        """Identifies the provider in the ledger (e.g. ``offline``, ``openai``)."""

    def read_ticket(self, text: str) -> tuple[TicketReading, Usage]:
        """Read a ticket into its asks, its context and its noise."""

    def route(self, question: str) -> tuple[RouteDecision, Usage]:
        """Classify the question's complexity."""

    def route_sources(self, query: str, sources: Sequence[SourceProfile]
                      ) -> tuple[SourceChoice, Usage]:
        """Which of ``sources`` (collections with descriptions and past hits) the sub-query
        ``query`` should search, best first, with a score per source and why."""

    def plan(self, question: str, *, max_sub_queries: int, context: str = "",
             fields: Sequence[MetadataField] = ()) -> tuple[Plan, Usage]:
        """Decompose the question into sub-queries with dependencies; ``context`` is what the
        ticket says about its sender and setup (to read the question by, never to search);
        ``fields``: the searched source's declared metadata fields, on which a sub-query may
        carry filters (validated at each search; never trusted as given)."""

    def check_sufficiency(
        self, sub_query: str, evidence: Sequence[Evidence], *,
        found: Sequence[Evidence] = (), attempt: int = 0, previous: Sequence[str] = (),
    ) -> tuple[SufficiencyVerdict, Usage]:
        """Decide whether the evidence answers the sub-query, in the same call what everything
        ``found`` for it says (the verdict's ``finding``) and, when not sufficient, the query
        to search next as attempt ``attempt`` (its ``rewrite``, none of ``previous``)."""

    def rewrite(
        self, sub_query: str, evidence: Sequence[Evidence], *, attempt: int,
        previous: Sequence[str],
    ) -> tuple[Rewrite, Usage]:
        """A different query for the same need; ``previous`` lists the queries already tried."""

    def find(self, sub_query: str, evidence: Sequence[Evidence]) -> tuple[Finding, Usage]:
        """What the evidence says in answer to the sub-query, for dependent sub-queries."""

    def verify(
        self, question: str, evidence: Sequence[Evidence], *, findings: Sequence[str],
        missing: Sequence[str] = (),
    ) -> tuple[Verification, Usage]:
        """Does the evidence, taken together, answer the question? What is missing? ``missing``:
        the evidence contract's unanswered keys, which the follow-ups should find first."""

    def rerank(self, question: str, candidates: Sequence[Evidence], *,
               asks: Sequence[str] = ()) -> tuple[Ranking, Usage]:
        """Score the job's pooled evidence for the question (each candidate for its own ask,
        when ``asks`` are given), before the context is assembled."""

    def synthesize(
        self, question: str, context: Sequence[Evidence], *, strategy: str,
        findings: Sequence[str], asks: Sequence[str] = (), chain_ends: Sequence[str] = (),
    ) -> tuple[DraftAnswer, Usage]:
        """Answer from the context only, citing it; flag contradictions. With ``asks`` (a
        ticket's), answer each in turn (``DraftAnswer.asks``), from the evidence found for it
        (``Evidence.ask_index``). ``chain_ends`` are the last hops of the plan's chains, their
        placeholders filled ("Where was Anselm Reyes born?"): what the question finally
        asks."""
