"""`ragq eval` runs each question as its ticket would run (issue 31): a question's ``acl``
reaches its job and the single-shot baseline alike, through the real queue."""

from __future__ import annotations

import json

from ragq.evaluation import run_eval
from ragq.ledger import batch_jobs, session_scope
from ragq.workers.wiring import build_ledger_engine

CORPUS = [
    {"id": "escalation-procedure", "title": "Escalation procedure (internal)", "acl": ["staff"],
     "text": "Agents escalate a disputed card charge to the disputes desk within two business "
             "days, using form D-7."},
    {"id": "card-fees", "title": "Card fees", "acl": ["public", "staff"],
     "text": "The Gold card has no annual fee. Foreign transactions cost 1.5 percent."},
]
QUESTIONS = [
    {"custom_id": "staff-q", "acl": ["staff"], "route": "simple", "metadata": {"desk": "cards"},
     "question": "Within how many business days do agents escalate a disputed card charge?",
     "gold_doc_ids": ["escalation-procedure"]},
]


def test_a_staff_question_is_answered_and_baselined_with_its_acl(stack, tmp_path):
    dataset = tmp_path / "staff_set"
    dataset.mkdir()
    (dataset / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (dataset / "questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    report = run_eval(stack.settings, dataset)
    with session_scope(build_ledger_engine(stack.settings)) as session:
        (job,) = batch_jobs(session, batch_id=report["batch_id"])
        assert list(job.acl) == ["staff"] and job.meta["route"] == "simple"
        assert job.meta["ticket_metadata"] == {"desk": "cards"}
    # the staff-only page is readable by both sides, so both find it
    assert report["agentic"]["overall"]["evidence_recall"] == 1.0
    assert report["baseline"]["overall"]["context_recall"] == 1.0
