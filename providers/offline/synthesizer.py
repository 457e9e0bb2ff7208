"""Extractive answers with citations: the sentences of the context that best match
the question (and each finding of the plan), quoted and cited as they are. Nothing is
paraphrased, so nothing is invented; ``extractive=True`` says so to the reader."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragq.providers.offline.contradictions import detect
from ragq.providers.offline.lexicon import (
    entities,
    entity_present,
    is_heading,
    key_terms,
    sentences,
    term_set,
)
from ragq.schemas.flow import AskAnswer, Citation, Contradiction, DraftAnswer, Evidence

MAX_SENTENCES = 4
MIN_SUPPORT = 0.34  # share of the question's key terms the chosen sentences must carry
MIN_SENTENCE_WORDS = 4
OWN_PAGE_BONUS = 0.05  # less than one term's worth: it only breaks ties
CLOSE_TO_BEST = 0.8  # a further sentence must score this share of the best one


@dataclass(frozen=True)
class _Sentence:
    text: str
    item: Evidence
    score: float


def _coverage(present: set[str], terms: list[str], names: list[str]) -> float:
    """The share of the key terms, and (twice weighted) the entities, that ``present`` holds."""
    hits = sum(t in present for t in terms) + 2 * sum(
        all(w in present for w in term_set(n)) for n in names)
    total = len(terms) + 2 * len(names)
    return hits / total if total else 0.0


def _score(sentence: str, title: str, terms: list[str], names: list[str]) -> float:
    return _coverage(term_set(sentence) | term_set(title), terms, names)


def _support(question: str, chosen: Sequence[_Sentence]) -> float:
    """How much of the question the chosen sentences cover together: a comparison's answer
    rests on one sentence per side, none of which covers the question alone."""
    present: set[str] = set()
    for c in chosen:
        present |= term_set(c.text) | term_set(c.item.title)
    return _coverage(present, key_terms(question), entities(question))


def _ranked(query: str, context: Sequence[Evidence]) -> list[_Sentence]:
    """Sentences by how much of ``query`` they carry; between equals, one on the page about
    an entity the query names (where that entity's own facts are told) comes first."""
    terms, names = key_terms(query), entities(query)
    out = []
    for rank, item in enumerate(context):
        own_page = OWN_PAGE_BONUS * any(entity_present(n, term_set(item.title)) for n in names)
        for sentence in sentences(item.text):
            if len(sentence.split()) < MIN_SENTENCE_WORDS or is_heading(sentence):
                continue
            score = _score(sentence, item.title, terms, names) + own_page - 0.01 * rank
            out.append(_Sentence(sentence, item, score))
    return sorted(out, key=lambda s: -s.score)


def _best(query: str, context: Sequence[Evidence]) -> _Sentence | None:
    best = next(iter(_ranked(query, context)), None)
    return best if best and best.score >= MIN_SUPPORT else None


def _pick(question: str, context: Sequence[Evidence], findings: Sequence[str],
          chain_ends: Sequence[str]) -> list[_Sentence]:
    """The sentences that answer first: the best for each chain's last hop (a nested question
    is answered where its chain ends), else the question's best and those nearly as good
    (never loosely related padding); then the best sentence for each finding the plan made,
    each a link of the chain the answer rests on."""
    chosen: list[_Sentence] = []

    def add(sentence: _Sentence | None) -> None:
        if sentence and all(c.text != sentence.text for c in chosen):
            chosen.append(sentence)

    for end in chain_ends:
        add(_best(end, context))
    ranked = _ranked(question, context)
    for sentence in ranked[: 1 if chosen else MAX_SENTENCES]:
        if sentence.score >= CLOSE_TO_BEST * ranked[0].score:
            add(sentence)
    terms, names = key_terms(question), entities(question)
    for finding in (f for f in findings if f.strip()):
        link = _best(finding, context)
        if link and _score(link.text, link.item.title, terms, names) > 0:
            add(link)  # a link of the chain says something of the question too
    return chosen[: MAX_SENTENCES + len(findings) + len(chain_ends)]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _disagreement(conflict: Contradiction, tiers: dict[str, int]) -> str:
    """Both sides in the sources' own words, the more authoritative (lower tier) first and
    named so when the tiers differ: the reader decides, nothing is averaged."""
    sides = sorted(zip(conflict.doc_ids, conflict.chunk_ids, conflict.statements, strict=False),
                   key=lambda side: tiers.get(side[1], 0))
    ranked = len({tiers.get(chunk, 0) for _, chunk, _ in sides}) > 1
    said = "; ".join(
        f"{doc}{' (more authoritative)' if ranked and i == 0 else ''} says "
        f"\u201c{_flat(statement)}\u201d" for i, (doc, _, statement) in enumerate(sides))
    return f"The sources disagree: {said}."


def _answer_text(chosen: Sequence[_Sentence], conflicts: Sequence[Contradiction],
                 tiers: dict[str, int]) -> str:
    """The chosen sentences in order; a sentence one side of a conflict gives way to the
    disagreement, told once, where the first of its sides would stand."""
    parts: list[str] = []
    told: set[int] = set()
    for sentence in chosen:
        conflict = next((i for i, c in enumerate(conflicts) if sentence.text in c.statements),
                        None)
        if conflict is None:
            parts.append(_flat(sentence.text))
        elif conflict not in told:
            told.add(conflict)
            parts.append(_disagreement(conflicts[conflict], tiers))
    return " ".join(parts)


def _concerns(conflict: Contradiction, chosen: Sequence[_Sentence]) -> bool:
    quoted = {c.text for c in chosen}
    return any(statement in quoted for statement in conflict.statements)


def _about(conflict: Contradiction, question: str) -> bool:
    """Whether a conflict is on the question's subject: one the answer never touches, on a
    topic the question does not name, is no flag on this answer (and no reason for review)."""
    return bool(set(conflict.topic.split()) & term_set(question))


def _conflict_citations(conflict: Contradiction) -> list[Citation]:
    return [Citation(doc_id=doc, chunk_id=chunk, quote=statement) for doc, chunk, statement
            in zip(conflict.doc_ids, conflict.chunk_ids, conflict.statements, strict=False)]


def synthesize(question: str, context: Sequence[Evidence], *, strategy: str,
               findings: Sequence[str], asks: Sequence[str] = (),
               chain_ends: Sequence[str] = ()) -> DraftAnswer:
    """An extractive answer that leads with the sentence answering the question (where each
    of ``chain_ends`` is answered, for a nested question), cites every
    sentence it uses and, where the sources it quotes disagree, says so and cites both sides;
    ``insufficient`` when the chosen sentences together carry less than ``MIN_SUPPORT`` of the
    question's key terms and entities. With ``asks`` (a ticket's), each ask is answered in
    turn from the context found for it (and what no ask found), and the answer lists them in
    order.
    ``strategy`` is the route's; extractive answers read the same on every route."""
    del strategy
    if asks:
        return _answer_each(asks, context)
    chosen = _pick(question, context, findings, chain_ends)
    contradictions = [c for c in detect(context)
                      if _about(c, question) or _concerns(c, chosen)]
    if not chosen or _support(question, chosen) < MIN_SUPPORT:
        return DraftAnswer(answer="The evidence found does not answer this question.",
                           contradictions=contradictions, extractive=True, insufficient=True)
    conflicts = [c for c in contradictions if _concerns(c, chosen)]
    citations = [Citation(doc_id=c.item.doc_id, chunk_id=c.item.chunk_id, quote=c.text)
                 for c in chosen]
    cited = {(c.chunk_id, c.quote) for c in citations}
    citations += [c for conflict in conflicts for c in _conflict_citations(conflict)
                  if (c.chunk_id, c.quote) not in cited]
    tiers = {e.chunk_id: e.authority_tier for e in context}
    return DraftAnswer(
        answer=_answer_text(chosen, conflicts, tiers), citations=citations,
        contradictions=contradictions, extractive=True, insufficient=False)


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
