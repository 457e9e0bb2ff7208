"""`ragq eval`: a dataset through the real queue, beside a single-shot baseline, in one run."""

from __future__ import annotations

import json
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragq.errors import InputError
from ragq.evaluation.metrics import question_row, summarize
from ragq.ingestion.submit import ingest_path
from ragq.schemas.tasks import Task
from ragq.schemas.ticket import Ticket
from ragq.settings import Settings
from ragq.submission import results, submit_tickets, wait
from ragq.workers.client import call

SEARCH_BATCH = Task.SEARCH_BATCH
Progress = Callable[[str, int, int], None]


def collection_for(dataset: Path) -> str:
    """A collection name derived from the dataset folder."""
    return "eval_" + re.sub(r"[^A-Za-z0-9_.-]", "_", dataset.resolve().name)[:50]


class EvalQuestion(BaseModel):
    """A line of questions.jsonl: a ticket plus gold documents and reference answers; other
    fields the source carries (question type, hops) travel as ticket metadata."""

    model_config = ConfigDict(extra="allow")

    custom_id: str
    question: str
    gold_doc_ids: list[str] = Field(default_factory=list)
    answer: str | None = None
    answer_aliases: list[str] = Field(default_factory=list)

    @property
    def answers(self) -> list[str]:
        return [a for a in [self.answer, *self.answer_aliases] if a]

    def ticket(self) -> Ticket:
        return Ticket(custom_id=self.custom_id, question=self.question,
                      metadata=dict(self.model_extra or {}))


def load_questions(dataset: Path, limit: int | None) -> list[EvalQuestion]:
    """The dataset's questions; raises InputError naming the file and line of a bad one."""
    path = dataset / "questions.jsonl"
    if not path.is_file() or not (dataset / "corpus.jsonl").is_file():
        raise InputError("a dataset folder needs corpus.jsonl and questions.jsonl",
                         source=str(dataset))
    questions = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(EvalQuestion.model_validate_json(line))
        except ValidationError as exc:
            raise InputError(str(exc).splitlines()[0], source=str(path), line=number) from exc
    return questions[:limit] if limit else questions


def _baseline(settings: Settings, collection: str, tickets: list[EvalQuestion],
              k: dict[str, int]) -> dict[str, tuple[list[str], float]]:
    """Single shot: embed the question and take the top k chunks, where k is the number of
    chunks the agentic flow put in that question's final context (the same context size)."""
    out: dict[str, tuple[list[str], float]] = {}
    for start in range(0, len(tickets), 50):
        part = tickets[start : start + 50]
        began = time.perf_counter()
        widest = max(k[t.custom_id] for t in part)
        hits = call(settings, SEARCH_BATCH, collection, [t.question for t in part], widest,
                    ["public"], timeout_s=600)
        per_question_ms = (time.perf_counter() - began) * 1000 / len(part)
        for ticket, found in zip(part, hits, strict=True):  # type: ignore[call-overload]
            top = found[: k[ticket.custom_id]]
            out[ticket.custom_id] = (list(dict.fromkeys(h["doc_id"] for h in top)),
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
    """The figures of one answered question, read from its result line (SPEC "Formats")."""
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


def run_eval(settings: Settings, dataset: Path, *, limit: int | None = None,
             on_progress: Progress | None = None) -> dict[str, Any]:
    """Ingest the corpus (idempotent), answer the questions through the workers, run the
    baseline, and return both reports grouped by route."""
    tickets = load_questions(dataset, limit)
    collection = collection_for(dataset)
    ingest_path(settings, dataset / "corpus.jsonl", collection=collection,
                on_progress=(lambda d, t: on_progress("ingest", d, t)) if on_progress else None)
    sent = submit_tickets(settings, [(n, q.ticket()) for n, q in enumerate(tickets, start=1)],
                          collection=collection,
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
    one_each = [{"usage": {"retrieval_calls_by_source": {collection: 1}}} for _ in tickets]
    return {"dataset": str(dataset), "collection": collection, "batch_id": sent.batch_id,
            "context_chunks_mean": sum(sizes.values()) / max(1, len(sizes)),
            "agentic": _by_route(agentic_rows),
            "baseline": _by_route(baseline_rows),
            "sources": {"agentic": retrievals_by_source(answered),
                        "baseline": retrievals_by_source(one_each)}}


def write_report(report: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(report, indent=2))
