"""The answer step's context when a hop's finding carried the chain on: that hop's further hits
yield to the other hops' (``JobState.answered_hops``, ``yield_answered_hops``)."""

from ragq.orchestration.flow.state import EvidenceState, FlowConfig, JobState, SubQueryState
from ragq.schemas.flow import Evidence
from ragq.schemas.statuses import JobStatus, SubQueryOrigin, SubQueryStatus
from tests.orchestration.answer_context import context_docs

QUESTION = "Which river runs through the town where the Ostwick bakery opened?"
DONE = SubQueryStatus.SUFFICIENT


def _sq(index: int, text: str, *, round_: int = 0, depends_on: tuple[int, ...] = (),
        finding: str | None = None, origin: SubQueryOrigin = SubQueryOrigin.PLAN
        ) -> SubQueryState:
    return SubQueryState(id=f"sq{round_}{index}", round=round_, index=index, text=text,
                         depends_on=depends_on, status=DONE, finding=finding, origin=origin)


def _row(sq: str, chunk: str, score: float) -> EvidenceState:
    item = Evidence(chunk_id=chunk, doc_id=chunk.split("::")[0], text=f"about {chunk}",
                    score=score)
    return EvidenceState(id=f"ev_{sq}_{chunk}", request_id=f"req_{sq}", sub_query_id=sq,
                         item=item)


def _state(sub_queries: tuple[SubQueryState, ...], evidence: tuple[EvidenceState, ...],
           max_chunks: int = 4) -> JobState:
    return JobState(job_id="job_1", question=QUESTION, collection="c", acl=("public",),
                    status=JobStatus.SYNTHESIZING, config=FlowConfig(context_max_chunks=max_chunks),
                    route="full", sub_queries=sub_queries, evidence=evidence)


BAKERY = _sq(0, "the town where the Ostwick bakery opened", finding="Dunmere")
RIVER = _sq(1, "Which river runs through {0}?", depends_on=(0,), finding="the Lune")
WHOLE = _sq(2, QUESTION, finding="the Lune")


def test_a_hop_is_answered_when_a_later_hop_of_its_round_searched_with_its_finding():
    unfound = _sq(0, "the town where the Ostwick bakery opened")
    follow_up = _sq(0, "Dunmere river", round_=1, depends_on=(2,), finding="the Lune",
                    origin=SubQueryOrigin.FOLLOW_UP)
    searched = {0: "the town where the Ostwick bakery opened"}
    assert _state((BAKERY, RIVER, WHOLE), ()).answered_hops == searched
    assert _state((unfound, RIVER, WHOLE), ()).answered_hops == {}
    assert _state((BAKERY, RIVER, WHOLE, follow_up), ()).answered_hops == searched


def test_the_answered_hops_runner_up_yields_its_context_place_to_the_whole_questions():
    evidence = (_row("sq00", "Ostwick_bakery::0", 0.9), _row("sq00", "Ostwick_mill::0", 0.85),
                _row("sq01", "Lune::0", 0.8), _row("sq02", "Dunmere::0", 0.84),
                _row("sq02", "Dunmere_bridges::0", 0.83))
    state = _state((BAKERY, RIVER, WHOLE), evidence, max_chunks=4)
    assert context_docs(state) == ["Ostwick_bakery", "Dunmere", "Lune", "Dunmere_bridges"]
