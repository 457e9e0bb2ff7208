"""`ragq eval`: a dataset through the real queue, beside a single-shot baseline, in one run."""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from ragq.errors import TicketRefusedError
from ragq.evaluation.metrics import question_row, summarize
from ragq.evaluation.questions import EvalQuestion, load_questions
from ragq.ingestion.submit import ingest_path
from ragq.schemas.tasks import Task
from ragq.settings import Settings
from ragq.submission import (
    Submitted,
    caller_of,
    cancel,
    errors,
    results,
    submit_tickets,
    wait,
)
from ragq.workers.client import call

SEARCH_BATCH = Task.SEARCH_BATCH
Progress = Callable[[str, int, int], None]


def collection_for(dataset: Path) -> str:
    """A collection name derived from the dataset folder."""
    return "eval_" + re.sub(r"[^A-Za-z0-9_.-]", "_", dataset.resolve().name)[:50]


def submit_questions(settings: Settings, questions: list[EvalQuestion], *, collection: str,
                     source: str) -> Submitted:
    """Submit the questions as one batch, each as its ticket (``ragq submit``'s admission).
    Raises TicketRefusedError for the first refused line (the batch is cancelled then): an
    evaluation with a question missing would not measure the dataset."""
    sent = submit_tickets(settings, [(n, q.ticket) for n, q in enumerate(questions, start=1)],
                          collection=collection, source=source)
    if sent.errors:
        cancel(settings, sent.batch_id)
        first = errors(settings, sent.batch_id)[0]
        raise TicketRefusedError(first["error"]["message"], code=first["error"]["code"],
                                 source=source, line=first["line"],
                                 custom_id=first.get("custom_id"))
    return sent


def _baseline(settings: Settings, collection: str, questions: list[EvalQuestion],
              k: dict[str, int]) -> dict[str, tuple[list[str], float]]:
    """Single shot: embed the question and take the top k chunks, where k is the number of
    chunks the agentic flow put in that question's final context (the same context size),
    searched with the ACL the question's job ran with (grouped by ACL, 50 per call)."""
    caller = caller_of(settings)
    by_acl: dict[tuple[str, ...], list[EvalQuestion]] = defaultdict(list)
    for question in questions:
        by_acl[question.acl(caller)].append(question)
    out: dict[str, tuple[list[str], float]] = {}
    for acl, group in by_acl.items():
        for start in range(0, len(group), 50):
            out |= _baseline_part(settings, collection, group[start : start + 50], k, acl)
    return out


def _baseline_part(settings: Settings, collection: str, part: list[EvalQuestion],
                   k: dict[str, int], acl: tuple[str, ...]
                   ) -> dict[str, tuple[list[str], float]]:
    began = time.perf_counter()
    widest = max(k[q.custom_id] for q in part)
    hits = cast(list[list[dict[str, Any]]],  # the batch search's JSON: hits per question
                call(settings, SEARCH_BATCH, collection, [q.question for q in part], widest,
                     list(acl), timeout_s=600))
    per_question_ms = (time.perf_counter() - began) * 1000 / len(part)
    out: dict[str, tuple[list[str], float]] = {}
    for question, found in zip(part, hits, strict=True):
        top = found[: k[question.custom_id]]
        out[question.custom_id] = (list(dict.fromkeys(h["doc_id"] for h in top)),
                                   per_question_ms)
    return out


def _by_route(rows: list[dict[str, Any]]) -> dict[str, Any]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["route"]].append(row)
    return {"overall": summarize(rows), **{r: summarize(g) for r, g in sorted(groups.items())}}


def retrievals_by_source(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """{source: {"calls": retrieval calls to it, "questions": questions that searched it,
    "calls_per_question": calls over all questions}} over the result lines, by source name."""
    calls: Counter[str] = Counter()
    questions: Counter[str] = Counter()
    for result in results:
        mine = (result.get("usage") or {}).get("retrieval_calls_by_source") or {}
        calls.update(mine)
        questions.update(name for name, n in mine.items() if n)
    return {name: {"calls": calls[name], "questions": questions[name],
                   "calls_per_question": calls[name] / max(1, len(results))}
            for name in sorted(calls)}


def _agentic_row(question: EvalQuestion, result: dict[str, Any]) -> dict[str, Any]:
    """The figures of one answered question, read from its result line (docs/formats.md)."""
    usage = result.get("usage") or {}
    return question_row(
        question.gold_doc_ids, question.answers, evidence=result.get("evidence_doc_ids", []),
        context=result.get("context_doc_ids", []), answer=result.get("answer") or "",
        retrieval_calls=usage.get("retrieval_calls", 0), model_calls=usage.get("llm_calls", 0),
        latency_ms=usage.get("latency_ms", 0), cost_usd=usage.get("cost_usd", 0.0),
        route=result.get("route") or "none", status=result.get("status") or "",
        tokens=usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
        escalated=result.get("review") is not None,
        review_reasons=(result.get("review") or {}).get("reasons") or ())


def per_question_row(custom_id: str, agentic: dict[str, Any], baseline: dict[str, Any]
                     ) -> dict[str, Any]:
    """One question's figures in the report (``questions``): what the HTML report plots
    against each other (model calls against recall, per route), agentic beside baseline."""
    return {"custom_id": custom_id, "route": agentic["route"], "status": agentic["status"],
            "model_calls": agentic["model_calls"],
            "retrieval_calls": agentic["retrieval_calls"],
            "evidence_recall": agentic["evidence_recall"],
            "context_recall": agentic["context_recall"], "escalated": agentic["escalated"],
            "baseline_evidence_recall": baseline["evidence_recall"],
            "baseline_context_recall": baseline["context_recall"]}


def run_eval(settings: Settings, dataset: Path, *, limit: int | None = None,
             on_progress: Progress | None = None) -> dict[str, Any]:
    """Ingest the corpus (idempotent), answer the questions through the workers, run the
    baseline, and return both reports grouped by route."""
    tickets = load_questions(dataset, limit, settings=settings)
    collection = collection_for(dataset)
    ingest_path(settings, dataset / "corpus.jsonl", collection=collection,
                on_progress=(lambda d, t: on_progress("ingest", d, t)) if on_progress else None)
    sent = submit_questions(settings, tickets, collection=collection,
                            source=str(dataset / "questions.jsonl"))
    wait(settings, sent.batch_id, timeout_s=6 * 3600,
         on_progress=(lambda d, t: on_progress("answer", d, t)) if on_progress else None)
    by_id = {r["custom_id"]: r for r in results(settings, sent.batch_id)}
    sizes = {t.custom_id: max(1, (by_id[t.custom_id].get("usage") or {})
                                .get("context_chunks", 0)) for t in tickets}
    baseline = _baseline(settings, collection, tickets, sizes)
    agentic_rows, baseline_rows = [], []
    for t in tickets:
        row = _agentic_row(t, by_id[t.custom_id])
        agentic_rows.append(row)
        docs, ms = baseline[t.custom_id]
        baseline_rows.append(question_row(
            t.gold_doc_ids, t.answers, evidence=docs, context=docs, answer="",
            retrieval_calls=1, model_calls=0, latency_ms=ms, cost_usd=0.0, route=row["route"]))
    answered = [by_id[t.custom_id] for t in tickets]
    per_question = [per_question_row(t.custom_id, a, b)
                    for t, a, b in zip(tickets, agentic_rows, baseline_rows, strict=True)]
    one_each = [{"usage": {"retrieval_calls_by_source": {collection: 1}}} for _ in tickets]
    return {"dataset": str(dataset), "collection": collection, "batch_id": sent.batch_id,
            "context_chunks_mean": sum(sizes.values()) / max(1, len(sizes)),
            "agentic": _by_route(agentic_rows),
            "baseline": _by_route(baseline_rows),
            "sources": {"agentic": retrievals_by_source(answered),
                        "baseline": retrievals_by_source(one_each)},
            "questions": per_question}


def write_report(report: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(report, indent=2))
