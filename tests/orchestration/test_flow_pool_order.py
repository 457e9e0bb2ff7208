"""The pool the answer step reranks and assembles is in the order the plan runs its searches,
whatever order the ledger recorded them in: a layer's searches commit in any order on the
workers, and ties fall to the earlier item."""

from itertools import permutations

from ragq.orchestration.flow.answer import pooled_evidence
from ragq.orchestration.flow.state import (
    EvidenceState,
    FlowConfig,
    JobState,
    RequestState,
    SubQueryState,
)
from ragq.schemas.flow import Evidence
from ragq.schemas.statuses import JobStatus, SubQueryOrigin

QUESTION = "Which river runs through the town where the Ostwick bakery opened?"
HOP = SubQueryState(id="sq00", round=0, index=0, text="the town of the Ostwick bakery")
RIVER = SubQueryState(id="sq01", round=0, index=1, text="river through {0}", depends_on=(0,))
WHOLE = SubQueryState(id="sq02", round=0, index=2, text=QUESTION)
FOLLOW_UP = SubQueryState(id="sq10", round=1, index=0, text="Dunmere river",
                          origin=SubQueryOrigin.FOLLOW_UP)
REQUESTS = (RequestState("rq_hop", "sq00", 0, "q", "k0", 5),
            RequestState("rq_river", "sq01", 0, "q", "k1", 5),
            RequestState("rq_river_again", "sq01", 1, "q", "k2", 5),
            RequestState("rq_whole", "sq02", 0, "q", "k3", 5),
            RequestState("rq_follow", "sq10", 0, "q", "k4", 5))


def _row(request: str, sub_query: str, chunk: str) -> EvidenceState:
    item = Evidence(chunk_id=chunk, doc_id=chunk.split("::")[0], text=f"about {chunk}",
                    score=0.5)
    return EvidenceState(id=f"ev_{chunk}", request_id=request, sub_query_id=sub_query,
                         item=item)


ROWS = (_row("rq_follow", "sq10", "follow::0"), _row("rq_river_again", "sq01", "retry::0"),
        _row("rq_river", "sq01", "river::0"), _row("rq_whole", "sq02", "whole::0"),
        _row("rq_hop", "sq00", "hop::0"), _row("rq_hop", "sq00", "hop::1"))


def _state(evidence: tuple[EvidenceState, ...]) -> JobState:
    return JobState(job_id="job_1", question=QUESTION, collection="c", acl=("public",),
                    status=JobStatus.SYNTHESIZING, config=FlowConfig(), route="full",
                    sub_queries=(HOP, RIVER, WHOLE, FOLLOW_UP), requests=REQUESTS,
                    evidence=evidence)


def test_the_pool_runs_by_round_layer_sub_query_and_attempt_whatever_the_commit_order():
    expected = ["hop::0", "hop::1", "whole::0", "river::0", "retry::0", "follow::0"]
    for order in permutations(range(len(ROWS))):
        if order.index(4) > order.index(5):  # one search's hits keep their rank order
            continue
        pool = pooled_evidence(_state(tuple(ROWS[i] for i in order)))
        assert [e.chunk_id for e in pool] == expected, order
