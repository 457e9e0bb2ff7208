"""The offline provider: every role, deterministic and network-free.

Each role is a function in its own module; this class only wires them to the
:class:`~providers.base.ModelProvider` interface and meters them. Usage token counts are
ESTIMATES (whitespace words of the inputs and outputs): no tokenizer runs, no money is spent.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from ragq.orchestration.sources import choose_sources
from ragq.providers.offline import (
    finder,
    planner,
    reader,
    reranker,
    rewriter,
    router,
    sufficiency,
    synthesizer,
    verifier,
)
from ragq.providers.offline.lexicon import estimate_words
from ragq.providers.offline.similarity import Similarity
from ragq.schemas.embedder import Embedder
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

MODEL = "offline"
T = TypeVar("T")


def _metered(work: Callable[[], T], inputs: Sequence[str], output: Callable[[T], str]
             ) -> tuple[T, Usage]:
    started = time.perf_counter()
    result = work()
    return result, Usage(model=MODEL, prompt_tokens=estimate_words(*inputs),
                         completion_tokens=estimate_words(output(result)),
                         latency_ms=(time.perf_counter() - started) * 1000)


def _texts(evidence: Sequence[Evidence]) -> list[str]:
    return [e.text for e in evidence]


def merged_check(sub_query: str, evidence: Sequence[Evidence], similarity: Similarity, *,
                 found: Sequence[Evidence] = (), attempt: int = 0,
                 previous: Sequence[str] = ()) -> SufficiencyVerdict:
    """The offline check's verdict with its finding and, when not sufficient, its rewrite:
    what the offline provider answers, and what the flow's local checks decide."""
    read = tuple(found) or tuple(evidence)
    verdict = sufficiency.check(sub_query, evidence, similarity)
    rewrite = None if verdict.sufficient else rewriter.rewrite(
        sub_query, read, attempt=attempt, previous=tuple(previous) or (sub_query,))
    return verdict.model_copy(update={"finding": finder.find(sub_query, read),
                                      "rewrite": rewrite})


class OfflineProvider:
    """Heuristic routing and planning, embedding/lexical checks, extractive synthesis.

    ``embedder`` gives the similarity signal of the sufficiency check and the verifier (its
    vectors are cached per text, see :mod:`providers.offline.similarity`).
    """

    def __init__(self, embedder: Embedder):
        self._similarity = Similarity(embedder)

    @property
    def name(self) -> str:
        return MODEL

    def read_ticket(self, text: str) -> tuple[TicketReading, Usage]:
        return _metered(lambda: reader.read_ticket(text, self._similarity.vectors), [text],
                        lambda r: " ".join(a.text for a in r.asks))

    def route(self, question: str) -> tuple[RouteDecision, Usage]:
        return _metered(lambda: router.route(question), [question], lambda r: r.reason)

    def route_sources(self, query: str, sources: Sequence[SourceProfile]
                      ) -> tuple[SourceChoice, Usage]:
        """The lexical fit of the query to each source's description, plus its past hits."""
        return _metered(lambda: choose_sources(query, sources),
                        [query, *(s.description for s in sources)], lambda c: c.reason)

    def plan(self, question: str, *, max_sub_queries: int, context: str = "",
             fields: Sequence[MetadataField] = ()) -> tuple[Plan, Usage]:
        # The heuristic planner reads the question's form; a ticket's context adds no form,
        # and the rules read a sub-query's constraints at each search, whatever the planner.
        return _metered(lambda: planner.plan(question, max_sub_queries=max_sub_queries),
                        [question], lambda p: " ".join(s.text for s in p.sub_queries))

    def check_sufficiency(self, sub_query: str, evidence: Sequence[Evidence], *,
                          found: Sequence[Evidence] = (), attempt: int = 0,
                          previous: Sequence[str] = ()) -> tuple[SufficiencyVerdict, Usage]:
        """The check of the latest pass (``evidence``), the finding of everything ``found``
        and, when not sufficient, the rewrite for ``attempt``: one call, as a model's."""
        read = tuple(found) or tuple(evidence)
        return _metered(lambda: merged_check(sub_query, evidence, self._similarity, found=found,
                                             attempt=attempt, previous=previous),
                        [sub_query, *_texts(read), *previous],
                        lambda v: " ".join([v.reason, v.finding.text if v.finding else "",
                                            v.rewrite.text if v.rewrite else ""]))

    def rewrite(self, sub_query: str, evidence: Sequence[Evidence], *, attempt: int,
                previous: Sequence[str]) -> tuple[Rewrite, Usage]:
        return _metered(
            lambda: rewriter.rewrite(sub_query, evidence, attempt=attempt, previous=previous),
            [sub_query, *_texts(evidence), *previous], lambda r: r.text)

    def find(self, sub_query: str, evidence: Sequence[Evidence]) -> tuple[Finding, Usage]:
        return _metered(lambda: finder.find(sub_query, evidence),
                        [sub_query, *_texts(evidence)], lambda f: f.text)

    def verify(self, question: str, evidence: Sequence[Evidence], *, findings: Sequence[str],
               missing: Sequence[str] = ()) -> tuple[Verification, Usage]:
        # The offline verifier reads the question's own entities and terms for what is
        # missing; a key the checks left unanswered was already rewritten up to its attempts.
        return _metered(lambda: verifier.verify(question, evidence, findings, self._similarity),
                        [question, *_texts(evidence), *findings],
                        lambda v: " ".join(v.follow_up_queries))

    def rerank(self, question: str, candidates: Sequence[Evidence], *,
               asks: Sequence[str] = ()) -> tuple[Ranking, Usage]:
        return _metered(lambda: reranker.rerank(question, candidates, asks),
                        [question, *_texts(candidates)], lambda r: r.reason)

    def synthesize(self, question: str, context: Sequence[Evidence], *, strategy: str,
                   findings: Sequence[str], asks: Sequence[str] = (),
                   chain_ends: Sequence[str] = ()) -> tuple[DraftAnswer, Usage]:
        return _metered(
            lambda: synthesizer.synthesize(question, context, strategy=strategy,
                                           findings=findings, asks=asks,
                                           chain_ends=chain_ends),
            [question, *_texts(context), *findings], lambda d: d.answer)
