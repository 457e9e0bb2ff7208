"""A small world for driving whole jobs in process: a provider whose every answer is drawn from
a seeded random source (valid and invalid plans, verdicts either way, follow-ups, refusals of
the answer, failures), a corpus searched by a deterministic fake store, dict-backed caches.

Seeded, not scripted: the same seed gives the same answers in the same call order, so one
scenario can run on the in-memory and on the SQL ledger and be compared.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragq.errors import ProviderError
from ragq.orchestration.flow import FlowConfig
from ragq.schemas.cache import CachedEvidence
from ragq.schemas.flow import (
    Ask,
    AskAnswer,
    ChunkScore,
    Citation,
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
    SourceProfile,
    Strategy,
    SufficiencyVerdict,
    TicketReading,
    Usage,
    Verification,
)
from ragq.schemas.search import SearchRequest
from ragq.tasks.inline import InlineAdapters
from ragq.vectorstore.base import Hit, SearchFilter

WORDS = ["camera", "founder", "company", "lens", "drone", "refund", "plan", "limit", "key",
         "rotate", "invoice", "region", "model", "token", "quota", "webhook"]
CORPUS = [(f"doc{i % 8}", f"doc{i % 8}::{i // 8}", " ".join(WORDS[(i * 3 + k) % len(WORDS)]
                                                            for k in range(12)))
          for i in range(16)]
COLLECTION = "world"


class SeededProvider:
    """Every role answered from ``rng``; ``failure_rate`` of calls raise a ProviderError that
    carries its attempts (as the openai provider's fatal errors do)."""

    name = "seeded"

    def __init__(self, rng: random.Random, *, failure_rate: float = 0.0):
        self.rng = rng
        self.failure_rate = failure_rate
        self.calls: list[str] = []

    def _usage(self, role: str) -> Usage:
        usage = Usage(model="m", prompt_tokens=self.rng.randint(0, 400),
                      completion_tokens=self.rng.randint(0, 120),
                      cost_usd=round(self.rng.choice([0.0, 0.0001, 0.002]), 6))
        self.calls.append(role)
        if self.rng.random() < self.failure_rate:
            raise ProviderError(f"{role} failed for good", role=role, model="m", usage=usage)
        return usage

    def _text(self, n: int = 3) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(n))

    def read_ticket(self, text: str) -> tuple[TicketReading, Usage]:
        usage = self._usage("ticket_reader")
        asks = [Ask(text=self._text(5) + "?") for _ in range(self.rng.randint(1, 4))]
        return TicketReading(asks=asks, context=self._text(8)), usage

    def route(self, question: str) -> tuple[RouteDecision, Usage]:
        usage = self._usage("router")
        return RouteDecision(question_class=self.rng.choice(list(QuestionClass))), usage

    def route_sources(self, query: str, sources: Sequence[SourceProfile]
                      ) -> tuple[SourceChoice, Usage]:
        """Any non-empty subset of the sources, sometimes with (or only) a name not offered."""
        usage = self._usage("source_router")
        names = [s.name for s in sources]
        chosen = self.rng.sample(names, self.rng.randint(1, len(names)))
        if self.rng.random() < 0.2:
            chosen = ["nowhere"] if self.rng.random() < 0.5 else [*chosen, "nowhere"]
        return SourceChoice(sources=chosen, scores={n: self.rng.random() for n in names},
                            reason="seeded"), usage

    def plan(self, question: str, *, max_sub_queries: int, context: str = "",
             fields: Sequence[Any] = ()) -> tuple[Plan, Usage]:
        usage = self._usage("planner")
        subs = []
        for i in range(self.rng.randint(0, 7)):
            deps = [self.rng.randint(-1, 7) for _ in range(self.rng.randint(0, 2))]
            text = self._text() + (f" {{{deps[0]}}}" if deps and self.rng.random() < 0.5 else "")
            subs.append(PlannedSubQuery(text=text if self.rng.random() > 0.05 else " ",
                                        depends_on=deps, reason=f"part {i}"))
        return Plan(sub_queries=subs, strategy=self.rng.choice(list(Strategy))), usage

    def check_sufficiency(self, sub_query: str, evidence: Sequence[Evidence], *,
                          found: Sequence[Evidence] = (), attempt: int = 0,
                          previous: Sequence[str] = ()) -> tuple[SufficiencyVerdict, Usage]:
        usage = self._usage("sufficiency")
        sufficient = self.rng.random() < 0.5
        text = self.rng.choice(["", self._text(2)])
        others = [self._text(2) for _ in range(self.rng.choice([0, 0, 1, 2]))] if text else []
        rewrite = None if sufficient or self.rng.random() < 0.1 else \
            Rewrite(text=self.rng.choice([sub_query, self._text(4)]))
        return SufficiencyVerdict(sufficient=sufficient, score=self.rng.random(),
                                  finding=Finding(text=text, alternatives=others),
                                  rewrite=rewrite), usage

    def rewrite(self, sub_query: str, evidence: Sequence[Evidence], *, attempt: int,
                previous: Sequence[str]) -> tuple[Rewrite, Usage]:
        usage = self._usage("rewriter")
        return Rewrite(text=self.rng.choice([sub_query, self._text(4)])), usage

    def find(self, sub_query: str, evidence: Sequence[Evidence]) -> tuple[Finding, Usage]:
        usage = self._usage("finder")
        text = self.rng.choice(["", self._text(2)])
        others = [self._text(2) for _ in range(self.rng.choice([0, 0, 1, 2]))] if text else []
        return Finding(text=text, alternatives=others), usage

    def verify(self, question: str, evidence: Sequence[Evidence], *, findings: Sequence[str],
               missing: Sequence[str] = ()) -> tuple[Verification, Usage]:
        usage = self._usage("verifier")
        follow_ups = [self._text() for _ in range(self.rng.randint(0, 3))]
        return Verification(sufficient=self.rng.random() < 0.4, confidence=self.rng.random(),
                            follow_up_queries=follow_ups + follow_ups[:1]), usage

    def rerank(self, question: str, candidates: Sequence[Evidence], *,
               asks: Sequence[str] = ()) -> tuple[Ranking, Usage]:
        usage = self._usage("reranker")
        chosen = [c for c in candidates if self.rng.random() < 0.7]
        return Ranking(scores=[ChunkScore(chunk_id=c.chunk_id, score=self.rng.random())
                               for c in chosen]), usage

    def synthesize(self, question: str, context: Sequence[Evidence], *, strategy: str,
                   findings: Sequence[str], asks: Sequence[str] = (),
                   chain_ends: Sequence[str] = ()) -> tuple[DraftAnswer, Usage]:
        usage = self._usage("synthesizer")
        answers = [AskAnswer(index=i, answer=self._text(4),
                             citations=[Citation(doc_id=c.doc_id, chunk_id=c.chunk_id)
                                        for c in context if c.ask_index == i],
                             insufficient=self.rng.random() < 0.3) for i in range(len(asks))]
        cited = [Citation(doc_id=c.doc_id, chunk_id=c.chunk_id) for c in context
                 if self.rng.random() < 0.5]
        return DraftAnswer(answer=self._text(6), citations=cited, asks=answers,
                           insufficient=self.rng.random() < 0.2), usage


class HashEmbedder:
    """Deterministic 16-dimensional unit vectors from a text's words; bills a token per word."""

    dim = 16
    model_id = "hash-16"

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def billed_tokens(self, texts: Sequence[str]) -> int:
        return sum(len(t.split()) for t in texts)

    def _vector(self, text: str) -> list[float]:
        out = [0.0] * self.dim
        for word in text.lower().split():
            out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dim] += 1.0
        norm = math.sqrt(sum(x * x for x in out)) or 1.0
        return [x / norm for x in out]


class CorpusStore:
    """A vector store over :data:`CORPUS` (every chunk ``public`` but doc0, which is
    ``staff``), ranked by cosine to the query."""

    def __init__(self, embedder: HashEmbedder):
        self.vectors = [(doc, chunk, text, embedder.embed([text])[0]) for doc, chunk, text
                        in CORPUS]
        self.searches = 0
        self.requests: list[SearchRequest | None] = []

    def search(self, collection: str, vector: Sequence[float], top_k: int,
               flt: SearchFilter | None = None, request: SearchRequest | None = None,
               question: Sequence[float] | None = None) -> list[Hit]:
        self.searches += 1
        self.requests.append(request)
        hits = []
        for doc, chunk, text, v in self.vectors:
            acl = ["staff"] if doc == "doc0" else ["public"]
            if flt is not None and flt.acl is not None and not set(flt.acl) & set(acl):
                continue
            score = sum(a * b for a, b in zip(vector, v, strict=True))
            asked = None if question is None else sum(
                a * b for a, b in zip(question, v, strict=True))
            hits.append(Hit(chunk, score, {"doc_id": doc, "chunk_id": chunk, "text": text,
                                           "title": doc, "source_version": "v1", "acl": acl},
                            text_score=score, question_score=asked))
        return sorted(hits, key=lambda h: -h.score)[:top_k]


@dataclass
class DictEvidenceCache:
    entries: dict[tuple[str, str], CachedEvidence] = field(default_factory=dict)

    def get(self, collection: str, key: str) -> CachedEvidence | None:
        return self.entries.get((collection, key))

    def put(self, collection: str, key: str, entry: CachedEvidence) -> bool:
        if not entry.hits:
            return False
        self.entries[(collection, key)] = entry
        return True

    def delete(self, collection: str, key: str) -> None:
        self.entries.pop((collection, key), None)

    def drop_collection(self, collection: str) -> int:
        gone = [k for k in self.entries if k[0] == collection]
        for k in gone:
            del self.entries[k]
        return len(gone)


@dataclass
class DictPlanCache:
    plans: dict[tuple[str, str, int], Plan] = field(default_factory=dict)

    def get(self, question: str, *, provider: str, max_sub_queries: int) -> Plan | None:
        return self.plans.get((question, provider, max_sub_queries))

    def put(self, question: str, plan: Plan, *, provider: str, max_sub_queries: int) -> bool:
        self.plans[(question, provider, max_sub_queries)] = plan
        return True

    def delete(self, question: str, *, provider: str, max_sub_queries: int) -> None:
        self.plans.pop((question, provider, max_sub_queries), None)


def seeded_world(seed: int, *, failure_rate: float = 0.0) -> InlineAdapters:
    """The world's adapters, the caches included (dict-backed, so later jobs can hit them)."""
    embedder = HashEmbedder()
    return InlineAdapters(SeededProvider(random.Random(seed), failure_rate=failure_rate),
                          embedder, CorpusStore(embedder), DictEvidenceCache(), DictPlanCache())


def config(**overrides: Any) -> FlowConfig:
    """A flow config with the product's defaults, prices that make cost move."""
    from decimal import Decimal

    values: dict[str, Any] = {"retrieval_call_usd": Decimal("0.0001"),
                              "rerank_call_usd": Decimal("0.0002"),
                              "embedding_per_mtok_usd": Decimal("20")}
    return FlowConfig(**(values | overrides))
