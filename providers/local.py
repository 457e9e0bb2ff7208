"""The roles played in process, without a model, whatever the provider (SPEC C3, C10).

Routing reads the question's form, and reranking re-scores evidence by signals every search
already carries (its retrieval score, its similarity to the question, the ask's words). Neither
needs a model, and each was a chained model call on every job's critical path. The rules are
the offline provider's, so a job routes and ranks the same with either provider.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragq.providers.offline import reranker, router
from ragq.schemas.flow import Evidence, Ranking, RouteDecision


def route(question: str) -> RouteDecision:
    """The question's class from its form, the reason naming the cues that fired."""
    decision = router.route(question)
    return decision.model_copy(update={"reason": f"local classifier: {decision.reason}"})


def rerank(question: str, candidates: Sequence[Evidence], asks: Sequence[str] = ()) -> Ranking:
    """A score per distinct chunk, each read against its own ask when ``asks`` are given."""
    return reranker.rerank(question, candidates, asks)
