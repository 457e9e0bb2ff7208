"""Does the evidence, taken together, answer the question? — coverage of the
question's entities and key terms across all evidence, plus topical similarity; what is missing
becomes follow-up queries aimed at exactly that."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragq.orchestration.text import content_words
from ragq.providers.offline.lexicon import WH_WORDS, coverage, entities, entity_present, term_set
from ragq.providers.offline.similarity import Similarity
from ragq.providers.offline.sufficiency import best_evidence, texts_of
from ragq.schemas.flow import Evidence, Verification

ALL_EVIDENCE = 40  # evidence items read
TOP_SIMILAR = 5  # the best items whose similarity to the question counts
COVERAGE_SUFFICIENT = 0.75
MAX_FOLLOW_UPS = 3
MIN_BRIDGE_WORDS = 2  # a lone capitalised word is too often a heading or a sentence opener
MIN_PLAIN_MISSING = 2  # one missing common word is noise, not a gap worth a search
SIM_WEIGHT = 0.4  # the rest of the confidence is coverage


def _context_words(question: str, entity: str, limit: int = 4) -> list[str]:
    own = {w.lower() for w in entity.split()}
    return [w for w in content_words(question) if w not in WH_WORDS and w not in own][:limit]


def follow_ups(question: str, missing: Sequence[str]) -> list[str]:
    """One query per missing entity (with the question's context words), then one for the
    missing plain terms beside the question's main entity."""
    named = entities(question)
    queries = [" ".join([m, *_context_words(question, m)]) for m in missing if m in named]
    plain = [m for m in missing if m not in named]
    if len(plain) >= MIN_PLAIN_MISSING and len(plain) > len(missing) / 2:
        queries.append(" ".join([*named[:1], *plain]))
    return list(dict.fromkeys(q for q in queries if q.strip()))[:MAX_FOLLOW_UPS]


def unexplored(question: str, evidence: Sequence[Evidence], findings: Sequence[str]
               ) -> list[str]:
    """Findings that name an entity the question does not, and that no evidence is about (no
    evidence title names it): the next hop of a bridge question starts there."""
    asked = term_set(question)
    titles = [term_set(e.title) for e in evidence if e.title]
    out = []
    for finding in dict.fromkeys(f.strip() for f in findings):
        if not finding or not finding[:1].isupper() or entity_present(finding, asked):
            continue
        if re.search(r"\d", finding) or len(finding.split()) < MIN_BRIDGE_WORDS:
            continue  # a date or a number is an answer, not an entity to look up
        if not any(entity_present(finding, t) for t in titles):
            out.append(finding)
    return out


def verify(question: str, evidence: Sequence[Evidence], findings: Sequence[str],
           similarity: Similarity) -> Verification:
    """Sufficient when no entity of the question is missing and coverage reaches
    ``COVERAGE_SUFFICIENT``; confidence blends coverage and similarity, halved per missing
    entity."""
    top = best_evidence(evidence, ALL_EVIDENCE)
    texts = texts_of(top)
    if not texts:
        return Verification(sufficient=False, confidence=0.0, missing_info=entities(question),
                            follow_up_queries=[question], reason="no evidence at all")
    cov, missing = coverage(question, texts)
    sim = max(_best_similarity(question, top[:TOP_SIMILAR], similarity), 0.0)
    missing_entities = [m for m in missing if m in entities(question)]
    confidence = ((1 - SIM_WEIGHT) * cov + SIM_WEIGHT * sim) * 0.5 ** len(missing_entities)
    found = [f for f in findings if f.strip()]
    bridges = unexplored(question, evidence, found)
    sufficient = not missing_entities and not bridges and cov >= COVERAGE_SUFFICIENT
    reason = (f"coverage {cov:.2f}, similarity {sim:.2f}, {len(found)} finding(s)"
              + (f", missing {missing}" if missing else "")
              + (f", no evidence yet about {bridges}" if bridges else ""))
    queries = [" ".join([b, *_context_words(question, b)]) for b in bridges]
    queries += follow_ups(question, missing)
    return Verification(
        sufficient=sufficient, confidence=max(0.0, min(1.0, confidence)),
        missing_info=[*missing, *bridges],
        follow_up_queries=[] if sufficient else list(dict.fromkeys(queries))[:MAX_FOLLOW_UPS],
        reason=reason,
    )


def _best_similarity(question: str, top: Sequence[Evidence], similarity: Similarity) -> float:
    """The best cosine of ``question`` with the ``top`` items' titled texts: the search's own
    when every item has it (``question_score``: the job's question against the chunk's stored
    text vector), else embedded now. Embedding five long texts per verdict was about a third of
    an offline worker's CPU. The sub-query's ``text_score`` is no stand-in: tried, it made the
    confidence worse. Cached evidence has no question score (another job's question filled the
    cache), so a verdict over it embeds.

    The stored vector embeds what ingest embeds: the titled text, or the text alone when it
    already begins with its title, where the embedded fallback reads the title twice (cosines
    up to 0.04 apart on anthropic_docs; no figure of the offline bench moved)."""
    scores = [e.question_score for e in top]
    if all(s is not None for s in scores):
        return max(s for s in scores if s is not None)
    return similarity.best(question, texts_of(top))
