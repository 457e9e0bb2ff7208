"""Evaluation arithmetic: recall of gold documents, all-gold rate, answer EM/F1,
cost (per question, per correct answer), tokens, budget exhaustion and latency percentiles — pure
functions over result records. A question counts as correct when all its gold documents reached
the final context (all-gold)."""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ragq.orchestration.flow.review import CONTRADICTIONS
from ragq.schemas.statuses import JobStatus

_ARTICLES = re.compile(r"\b(a|an|the)\b")


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return float(ordered[rank - 1])


def recall(gold: Iterable[str], found: Iterable[str]) -> float:
    """Share of gold documents among ``found`` (1.0 when there is no gold)."""
    wanted = set(gold)
    return len(wanted & set(found)) / len(wanted) if wanted else 1.0


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation: lowercase, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, answers: Sequence[str]) -> float:
    pred = normalize_answer(prediction)
    return float(any(pred == normalize_answer(a) for a in answers))


def f1(prediction: str, answers: Sequence[str]) -> float:
    """Best token F1 of the prediction against any reference answer."""
    pred = normalize_answer(prediction).split()
    best = 0.0
    for answer in answers:
        gold = normalize_answer(answer).split()
        common = sum((Counter(pred) & Counter(gold)).values())
        if common:
            p, r = common / len(pred), common / len(gold)
            best = max(best, 2 * p * r / (p + r))
    return best


def answer_recall(prediction: str, answers: Sequence[str]) -> float:
    """1.0 when a reference answer appears verbatim (normalised) in the prediction — the fair
    reading for extractive answers, which quote whole sentences."""
    pred = f" {normalize_answer(prediction)} "
    return float(any(f" {normalize_answer(a)} " in pred for a in answers if a.strip()))


def _cost_figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Cost per correct answer (total cost / all-gold questions; None when none is correct),
    budget exhaustion rate, the share of jobs escalated to the review queue (the review rate)
    and of those escalated for a contradiction among them, and mean tokens (prompt +
    completion)."""
    n = len(rows)
    total = sum(float(r.get("cost_usd", 0.0)) for r in rows)
    correct = sum(1 for r in rows if r.get("all_gold"))
    exhausted = sum(1 for r in rows if r.get("status") == JobStatus.BUDGET_EXHAUSTED)
    return {
        "cost_usd_total": total,
        "correct": float(correct),
        "cost_per_correct_answer": total / correct if correct else None,
        "budget_exhaustion_rate": exhausted / n,
        "escalation_rate": sum(1 for r in rows if r.get("escalated")) / n,
        "contradiction_review_rate": sum(
            1 for r in rows if CONTRADICTIONS in r.get("review_reasons", ())) / n,
        "tokens_mean": sum(float(r.get("tokens", 0)) for r in rows) / n,
    }


def summarize(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """Aggregate per-question rows (see :func:`question_row`) into the report's figures.

    ``cost_usd_mean`` is the cost per question; ``cost_per_correct_answer`` divides the total
    cost by the all-gold questions and is None when there are none.
    """
    n = len(rows)
    if not n:
        return {"questions": 0}

    def mean(key: str) -> float:
        return sum(float(r[key]) for r in rows) / n

    out: dict[str, float | None] = {
        "questions": n,
        "evidence_recall": mean("evidence_recall"),
        "context_recall": mean("context_recall"),
        "all_gold_rate": mean("all_gold"),
        "retrieval_calls_mean": mean("retrieval_calls"),
        "retrieval_calls_p95": percentile([r["retrieval_calls"] for r in rows], 95),
        "model_calls_mean": mean("model_calls"),
        "model_calls_p95": percentile([r["model_calls"] for r in rows], 95),
        "latency_ms_p50": percentile([r["latency_ms"] for r in rows], 50),
        "latency_ms_p95": percentile([r["latency_ms"] for r in rows], 95),
        "cost_usd_mean": mean("cost_usd"),
        **_cost_figures(rows),
    }
    scored = [r for r in rows if r.get("answers")]
    if scored:
        out["answer_em"] = sum(r["em"] for r in scored) / len(scored)
        out["answer_f1"] = sum(r["f1"] for r in scored) / len(scored)
        out["answer_in_text"] = sum(r["answer_in_text"] for r in scored) / len(scored)
    return out


def question_row(gold: Sequence[str], answers: Sequence[str], *, evidence: Sequence[str],
                 context: Sequence[str], answer: str, retrieval_calls: int, model_calls: int,
                 latency_ms: float, cost_usd: float, route: str, status: str = JobStatus.COMPLETED,
                 tokens: int = 0, escalated: bool = False,
                 review_reasons: Sequence[str] = ()) -> dict[str, Any]:
    """The per-question figures one result (agentic or baseline) contributes; ``status`` is the
    job's status, ``tokens`` its prompt plus completion tokens, ``escalated`` whether it went
    to the review queue and ``review_reasons`` why (``review.reasons`` of its result)."""
    return {
        "route": route, "status": status, "tokens": tokens, "escalated": escalated,
        "review_reasons": list(review_reasons),
        "evidence_recall": recall(gold, evidence),
        "context_recall": recall(gold, context), "all_gold": float(set(gold) <= set(context)),
        "retrieval_calls": retrieval_calls, "model_calls": model_calls,
        "latency_ms": latency_ms, "cost_usd": cost_usd, "answers": list(answers),
        "em": exact_match(answer, answers) if answers else 0.0,
        "f1": f1(answer, answers) if answers else 0.0,
        "answer_in_text": answer_recall(answer, answers) if answers else 0.0,
    }
