"""Extractive answers with citations (SPEC C11): the sentences of the context that best match
the question (and each finding of the plan), quoted and cited as they are. Nothing is
paraphrased, so nothing is invented; ``extractive=True`` says so to the reader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragq.providers.offline.contradictions import detect
from ragq.providers.offline.lexicon import entities, key_terms, sentences, term_set
from ragq.schemas.flow import AskAnswer, Citation, DraftAnswer, Evidence

MAX_SENTENCES = 4
MIN_SUPPORT = 0.34  # share of the question's key terms the best sentence must carry
MIN_SENTENCE_WORDS = 4


@dataclass(frozen=True)
class _Sentence:
    text: str
    item: Evidence
    score: float


def _score(sentence: str, title: str, terms: list[str], names: list[str]) -> float:
    present = term_set(sentence) | term_set(title)
    hits = sum(t in present for t in terms) + 2 * sum(
        all(w in present for w in term_set(n)) for n in names)
    total = len(terms) + 2 * len(names)
    return hits / total if total else 0.0


def _ranked(query: str, context: Sequence[Evidence]) -> list[_Sentence]:
    terms, names = key_terms(query), entities(query)
    out = []
    for rank, item in enumerate(context):
        for sentence in sentences(item.text):
            if len(sentence.split()) < MIN_SENTENCE_WORDS:
                continue
            score = _score(sentence, item.title, terms, names) - 0.01 * rank
            out.append(_Sentence(sentence, item, score))
    return sorted(out, key=lambda s: -s.score)


def _pick(question: str, context: Sequence[Evidence], findings: Sequence[str]) -> list[_Sentence]:
    chosen: list[_Sentence] = []
    queries = [question, *(f for f in findings if f.strip())]
    for query in queries:  # the question's best sentences, then one per finding
        for candidate in _ranked(query, context)[: MAX_SENTENCES if query == question else 1]:
            if candidate.score > 0 and all(c.text != candidate.text for c in chosen):
                chosen.append(candidate)
    return chosen[: MAX_SENTENCES + len(findings)]


def synthesize(question: str, context: Sequence[Evidence], *, strategy: str,
               findings: Sequence[str], asks: Sequence[str] = ()) -> DraftAnswer:
    """An extractive answer citing every sentence it uses; ``insufficient`` when no sentence
    carries at least ``MIN_SUPPORT`` of the question's key terms and entities. With ``asks``
    (a ticket's), each ask is answered in turn from the context found for it (and what no ask
    found), and the answer lists them in order."""
    if asks:
        return _answer_each(asks, context)
    chosen = _pick(question, context, findings)
    contradictions = detect(context)
    if not chosen or chosen[0].score < MIN_SUPPORT:
        return DraftAnswer(answer="The evidence found does not answer this question.",
                           contradictions=contradictions, extractive=True, insufficient=True)
    lead = [f.strip() for f in findings if f.strip()]
    prefix = f"Found ({strategy}): {'; '.join(lead)}. " if lead and strategy != "single" else ""
    return DraftAnswer(
        answer=prefix + " ".join(c.text for c in chosen),
        citations=[Citation(doc_id=c.item.doc_id, chunk_id=c.item.chunk_id, quote=c.text)
                   for c in chosen],
        contradictions=contradictions, extractive=True, insufficient=False,
    )


def _answer_each(asks: Sequence[str], context: Sequence[Evidence]) -> DraftAnswer:
    answers = []
    for index, ask in enumerate(asks):
        mine = [e for e in context if e.ask_index in (index, None)]
        draft = synthesize(ask, mine, strategy="single", findings=())
        answers.append(AskAnswer(index=index, answer=draft.answer, citations=draft.citations,
                                 contradictions=draft.contradictions,
                                 insufficient=draft.insufficient))
    text = "\n\n".join(f"{i + 1}. {ask}\n{a.answer}"
                         for i, (ask, a) in enumerate(zip(asks, answers, strict=True)))
    return DraftAnswer(
        answer=text, citations=[c for a in answers for c in a.citations],
        contradictions=[c for a in answers for c in a.contradictions], extractive=True,
        insufficient=all(a.insufficient for a in answers), asks=answers)
