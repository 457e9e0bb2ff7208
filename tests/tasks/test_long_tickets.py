"""Long support tickets (pasted logs, several thousand characters, the 20,000 default limit)
through the real flow in process: the asks still stand apart, an ask that is a whole log is
bounded before it is routed, planned and searched, and the job ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.text import ASK_MAX_CHARS, bounded_ask
from ragq.schemas.document import Document
from ragq.schemas.ticket import MAX_QUESTION_CHARS
from tests.tasks.inprocess import Index, indexed
from tests.tasks.test_tickets import DOCS

LOG = "".join(f"2026-05-02T10:11:{i % 60:02d}Z ERROR deploy worker={i % 7} code=E{i % 90} "
              f"path=/srv/app/releases/{i}\n" for i in range(150))
LONG_TICKET = f"""Hello team,

We are a design studio of twelve people and moved to your Team plan in May. Since the last
release our deploys fail every night and we have spent a week on it.

{LOG}
1. How do we rotate an API key without downtime?
2. Can a workspace move to another region?

Thanks,
Noor"""


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Index]:
    with indexed([Document(**d) for d in DOCS], tmp_path_factory.mktemp("vectors")) as index:
        yield index


def test_a_ticket_with_pasted_logs_is_answered_ask_by_ask(kb):
    assert 9_000 < len(LONG_TICKET) < MAX_QUESTION_CHARS
    result = kb.run(LONG_TICKET)
    assert result["status"] == "completed"
    asks = result["asks"]
    assert [a["text"] for a in asks] == ["How do we rotate an API key without downtime?",
                                         "Can a workspace move to another region?"]
    cited = [{c["doc_id"] for c in a["citations"]} for a in asks]
    assert "keys" in cited[0] and "regions" in cited[1]
    assert "ERROR" not in result["answer"]


def test_a_ticket_that_is_only_a_log_is_searched_by_a_bounded_ask(kb):
    log_only = (LOG * 4)[:MAX_QUESTION_CHARS]
    result = kb.run(log_only)
    assert result["status"] in {"completed", "insufficient_evidence"}
    (ask,) = result["asks"]
    assert len(ask["text"]) <= ASK_MAX_CHARS + 3 and "…" in ask["text"]


@given(st.text(min_size=0, max_size=5000))
def test_a_bounded_ask_fits_and_keeps_its_start_and_end(text):
    bounded = bounded_ask(text, 300)
    assert len(bounded) <= 303
    if len(text.strip()) <= 300:
        assert bounded == text.strip()
    else:
        head, tail = bounded.split(" … ", 1)
        assert text.strip().startswith(head.rstrip()) and text.strip().endswith(tail.lstrip())
