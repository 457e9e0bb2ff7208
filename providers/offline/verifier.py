"""Does the evidence, taken together, answer the question? (SPEC C8) — coverage of the
question's entities and key terms across all evidence, plus topical similarity; what is missing
becomes follow-up queries aimed at exactly that."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragq.orchestration.text import content_words
from ragq.providers.offline.lexicon import WH_WORDS, coverage, entities, entity_present, term_set
from ragq.providers.offline.similarity import Similarity
from ragq.providers.offline.sufficiency import evidence_texts
from ragq.schemas.flow import Evidence, Verification

ALL_EVIDENCE = 40  # evidence items read
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
    texts = evidence_texts(evidence, ALL_EVIDENCE)
    if not texts:
        return Verification(sufficient=False, confidence=0.0, missing_info=entities(question),
                            follow_up_queries=[question], reason="no evidence at all")
    cov, missing = coverage(question, texts)
    sim = max(similarity.best(question, texts[:5]), 0.0)
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
