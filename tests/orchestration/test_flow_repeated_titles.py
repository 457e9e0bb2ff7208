"""The answer step's context when a hop's best hit is a further paragraph of a title another
sub-query already ranked: the hop's reserved place goes to its next page."""

from ragq.orchestration.flow.state import EvidenceState, FlowConfig, JobState, SubQueryState
from ragq.schemas.flow import Evidence
from ragq.schemas.statuses import JobStatus, SubQueryStatus
from tests.orchestration.answer_context import context_docs

QUESTION = "Which ferry serves the island where the Tern lighthouse keeper was born?"


def _row(sq: str, chunk: str, title: str, score: float) -> EvidenceState:
    item = Evidence(chunk_id=chunk, doc_id=chunk.split("::")[0], title=title,
                    text=f"about {chunk}", score=score)
    return EvidenceState(id=f"ev_{sq}_{chunk}", request_id=f"req_{sq}", sub_query_id=sq,
                         item=item)


def test_a_second_paragraph_of_a_ranked_title_gives_its_hops_place_to_another_page():
    subs = tuple(SubQueryState(id=f"sq0{i}", round=0, index=i, text=text,
                               status=SubQueryStatus.SUFFICIENT)
                 for i, text in enumerate(["the Tern lighthouse keeper's birthplace",
                                           "ferries to Skerra", QUESTION]))
    evidence = (_row("sq00", "Tern_lighthouse::0", "Tern lighthouse", 0.95),
                _row("sq02", "Skerra_1::0", "Skerra", 0.9),
                _row("sq01", "Skerra_2::0", "Skerra", 0.6),
                _row("sq01", "Skerra_ferry::0", "Skerra ferry", 0.45),
                _row("sq02", "Gull_Bay::0", "Gull Bay", 0.8),
                _row("sq02", "Puffin_Cove::0", "Puffin Cove", 0.7))
    state = JobState(job_id="job_1", question=QUESTION, collection="c", acl=("public",),
                     status=JobStatus.SYNTHESIZING, config=FlowConfig(context_max_chunks=4),
                     route="full", sub_queries=subs, evidence=evidence)
    assert context_docs(state) == ["Tern_lighthouse", "Skerra_1", "Skerra_ferry", "Gull_Bay"]
