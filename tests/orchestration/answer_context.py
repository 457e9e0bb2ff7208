"""The context the answer step assembles for a job's state, as the synthesizer is asked with it
(the reranker answered with no scores of its own: the evidence keeps its scores)."""

from __future__ import annotations

from ragq.orchestration.flow.actions import CallRole, RerankRequest, SynthesizeRequest
from ragq.orchestration.flow.answer import on_reranker
from ragq.orchestration.flow.events import RoleAnswered
from ragq.orchestration.flow.state import JobState
from ragq.schemas.flow import Ranking


def context_docs(state: JobState) -> list[str]:
    """The document ids of the synthesizer's context, in order."""
    pool = tuple(e.item for e in state.evidence)
    call = CallRole("reranker", "rerank", 0, RerankRequest(state.question, pool, ()),
                    {"stop_reason": "sufficient"})
    actions = on_reranker(state, RoleAnswered(call=call, value=Ranking(scores=[]), usage=None))
    request = next(a.request for a in actions if isinstance(a, CallRole))
    assert isinstance(request, SynthesizeRequest)
    return [e.doc_id for e in request.context]
