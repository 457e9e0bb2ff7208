"""What a sub-query found, in a few words: the entity, date or number the best evidence gives
in answer, to fill the placeholders of the sub-queries that depend on it.

Candidates are the named entities (or dates/numbers, when the sub-query asks for one) of the
evidence sentences that share most words with the sub-query, plus the titles of top evidence
(in an encyclopedic corpus the page about "the film shot in Leland in 1986" is titled with the
answer). Anything the sub-query already names is no answer to it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragq.orchestration.text import stem, words
from ragq.providers.offline.lexicon import (
    entities,
    entity_present,
    entity_spans,
    key_terms,
    sentences,
    term_set,
)
from ragq.providers.offline.relations import proximity_fit, relation_terms
from ragq.schemas.flow import FINDING_ALTERNATIVES, Evidence, Finding

TOP_EVIDENCE = 3  # evidence items read, best score first
HEAD_MATCH = 2.0  # a candidate that names the head noun itself ("McDowell County")
OFF_ANCHOR = 0.3  # weight of evidence that names none of the sub-query's entities
TITLE_WEIGHT = 0.9  # a title is a good answer only when its page matches the description
ALTERNATIVE_SHARE = 0.7  # of the best score a runner-up needs to be offered
_DATE = re.compile(r"\b(?:(?:\d{1,2}\s+)?(?:January|February|March|April|May|June|July|August|"
                   r"September|October|November|December)\s+(?:\d{1,2},\s+)?\d{4}|\d{4}s?|"
                   r"\d{1,2}(?:st|nd|rd|th)\s+century)\b")
_NUMBER = re.compile(r"\b\d[\d,.]*(?:\s+(?:million|billion|thousand|percent|%))?")
_ASKS_DATE = re.compile(r"\b(?:when|what year|which year|date|era|period|century|decade)\b", re.I)
_ASKS_NUMBER = re.compile(r"\b(?:how many|how much|number of|population|amount)\b", re.I)
# A date range ("4 May 1910 – 2 June 1975", "from 1961 to 1968"): an end asks for its later
# date, a start for its earlier one.
_ASKS_END = re.compile(r"\b(?:die|died|dies|death|dead|end|ended|closed|dissolved|disbanded|"
                       r"retired|until)\b", re.I)
_RANGE_BEFORE = re.compile(r"(?:[–—-]|\b(?:to|until|till))\s*$")
RANGE_END_FIT = 1.5  # the later date of a range, for a question about an end
RANGE_START_FIT = 0.7  # the later date of a range, for any other date question
_VALUE_KINDS = ("date", "date:end", "number")  # asked as a value, never as a page's title
_ADDRESS_TAIL = re.compile(r"[A-Z][\w'’.-]*,\s*$")
_ADDRESS_PART = re.compile(r"[A-Z][\w'’.-]*,")
_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|of|to)\s+(?:the\s+)?$", re.I)
_AGENT_CUE = re.compile(r"\b(?:by|with|and|from)\s+$|,\s*$", re.I)
_ASKS_PLACE = re.compile(r"\b(?:where|country|state|city|county|town|village|location|birthplace|"
                         r"place|region|province|capital|continent|island|nation|area|district)\b",
                         re.I)
_ASKS_PERSON = re.compile(r"^\s*(?:who|whom|whose)\b|\b(?:\w+(?:er|or|ist|ian)s?|wife|husband|"
                          r"spouse|father|mother|son|daughter|brother|sister|child|parent|king|"
                          r"queen|chief|head|person|man|woman)\b", re.I)
_NOT_AGENTS = frozenset({"number", "order", "water", "border", "center", "centre", "other",
                         "power", "chapter", "quarter", "letter", "meter", "river", "color",
                         "error", "sector", "factor", "author's", "character", "year", "later"})


@dataclass(frozen=True)
class _Candidate:
    text: str
    score: float
    doc_id: str


_LEAD = re.compile(r"^\s*(?:(?i:what|which)\s+(?:(?i:kind|type|sort|part)\s+of\s+)?(\w+)"
                   r"|(?i:the|a|an)\s+(?:[\w'’-]+\s+){0,3}?"
                   r"([\w'’-]+)(?=\s+(?i:of|that|which|who|whom|whose|where|when|in)\b|\s+[A-Z])"
                   r"|[A-Z][\w\s.'-]*?['’]s?\s+(?:\w+\s+)?(\w+))")


_TRAILING = re.compile(r"\b(?:a|an|the)\s+(?:[\w'’-]+\s+){0,3}?([a-z][\w'’-]*)\s*[?.]?$")


_INDEFINITE = re.compile(r"\b(?i:a|an)\s+((?:[\w'’-]+\s+){0,4}?[\w'’-]+)"
                         r"(?=\s+(?i:that|which|who|whom|whose|where|when|of|in|on|at|by|for|from"
                         r"|with|as|is|was|were|are|has|had|and|or)\b|\s+\w+ed\b|\s*[,?.]|\s*$)")
_WH_LEAD = re.compile(r"^\s*(?i:what|which|who|whom|whose|when|where|why|how|in\s+what|in\s+which"
                      r"|is|are|was|were|do|does|did)\b")


def _statement_head(query: str) -> str:
    """The head of the last indefinite noun phrase of a statement: English introduces the
    unknown a statement-shaped sub-query asks for with "a"/"an" ("was published by an
    independent publishing HOUSE that…", "featuring an American ACTRESS")."""
    if _WH_LEAD.match(query):
        return ""
    found = list(_INDEFINITE.finditer(query))
    return found[-1].group(1).split()[-1].lower() if found else ""


def head_noun(query: str) -> str:
    """The noun naming what is asked for: "the COUNTRY where…", "which CITY…", "X's AUTHOR",
    or the last noun of a statement ending in a description ("X played for an NFL TEAM"),
    else the unknown a statement introduces ("X was produced by a MAN")."""
    trailing = _TRAILING.search(query)
    if trailing and not _LEAD.match(query):
        return trailing.group(1).lower()
    statement = _statement_head(query)
    if statement:
        return statement
    match = _LEAD.match(query)
    if not match:
        return ""
    return next((g for g in match.groups() if g), "").lower()


def _noun_kind(noun: str) -> str:
    if not noun:
        return ""
    if _ASKS_PLACE.fullmatch(noun):
        return "place"
    if _ASKS_DATE.fullmatch(noun) or noun in ("year", "time", "day", "month"):
        return "date"
    if _ASKS_PERSON.fullmatch(noun) and noun.rstrip("s") not in _NOT_AGENTS:
        return "person"
    return ""


def _kind(query: str) -> str:
    """What the sub-query asks for: number, date, place, person or (any) entity. The leading
    question word or head noun decides; later words ("lived in when he died") do not."""
    lead = query.strip().lower()
    if lead.startswith(("how many", "how much")) or _ASKS_NUMBER.match(lead):
        return "number"
    if lead.startswith(("when", "what year", "which year", "in what year", "in which year")):
        return "date"
    if lead.startswith(("where", "in what country", "in which country")):
        return "place"
    if lead.startswith(("who ", "whom ", "whose ")):
        return "person"
    return _noun_kind(head_noun(query)) or "entity"


def _fit(kind: str, text: str, before: str, head: str) -> float:
    """How well a candidate's shape and left context suit the kind asked for; a candidate
    naming the head noun ("McDowell County" for "the county…") suits best."""
    tokens = text.split()
    if head and head in {t.lower() for t in tokens}:
        return HEAD_MATCH
    if kind in ("date", "date:end"):
        closes_range = bool(_RANGE_BEFORE.search(before))
        return (RANGE_END_FIT if kind == "date:end" else RANGE_START_FIT) if closes_range else 1.0
    if kind == "place" and _ADDRESS_TAIL.search(before):
        # "…, Gwanda District, Zimbabwe": the later in an address, the wider the place
        return 1.3 + 0.1 * min(len(_ADDRESS_PART.findall(before)), 3)
    if kind == "person":
        shape = 1.3 if 2 <= len(tokens) <= 4 and " of " not in f" {text} " else 0.8
        return shape * (1.3 if _AGENT_CUE.search(before[-12:]) else 1.0)
    if kind == "place":
        return 1.3 if _PLACE_CUE.search(before[-12:]) else 0.9
    return 1.0


def _spans(sentence: str, kind: str) -> list[tuple[str, int]]:
    """Candidate strings of a sentence with their offsets, for the kind asked."""
    if kind in ("date", "date:end"):
        return [(m.group(), m.start()) for m in _DATE.finditer(sentence)]
    if kind == "number":
        return [(m.group().rstrip(".,"), m.start()) for m in _NUMBER.finditer(sentence)]
    return [(s.text, s.start) for s in entity_spans(sentence)
            if not s.text.startswith("{") and (s.start > 0 or " " in s.text)]


def _novel(candidate: str, query_terms: set[str]) -> bool:
    own = [stem(w) for w in words(candidate)]
    return bool(own) and sum(w in query_terms for w in own) / len(own) <= 0.5


def _sentence_score(sentence: str, terms: list[str]) -> float:
    if not terms:
        return 0.0
    present = term_set(sentence)
    return sum(t in present for t in terms) / len(terms)


def _candidates(query: str, evidence: Sequence[Evidence]) -> list[_Candidate]:
    kind, terms, query_terms = _kind(query), key_terms(query), term_set(query)
    if kind == "date" and _ASKS_END.search(query):
        kind = "date:end"
    head = head_noun(query)
    relation = relation_terms(query, head)
    if head and _noun_kind(head) not in ("place", "date"):
        # "the stars of X": the evidence names them beside the same word ("stars A, B"); a
        # place's head names the answer itself instead ("McDowell County", not what follows)
        relation = relation._replace(leads=relation.leads | {stem(head)})
    nearby = set(terms)
    query_terms -= {stem(head)}  # "McDowell County" answers "the county…"
    anchors = [e for e in entities(query) if not e.startswith("{")]
    out: list[_Candidate] = []
    for rank, item in enumerate(evidence):
        discount = 1.0 / (1.0 + 0.5 * rank)
        present = term_set(f"{item.title} {item.text}")
        if anchors and not any(entity_present(a, present) for a in anchors):
            discount *= OFF_ANCHOR  # evidence about something else answers nothing here
        best_sentence = 0.0
        for sentence in sentences(item.text):
            overlap = _sentence_score(sentence, terms)
            best_sentence = max(best_sentence, overlap)
            for text, offset in _spans(sentence, kind):
                if not _novel(text, query_terms):
                    continue
                fit = _fit(kind, text, sentence[max(0, offset - 40) : offset], head) \
                    * proximity_fit(sentence, offset, len(text), relation, nearby)
                out.append(_Candidate(text, (0.2 + overlap) * discount * fit, item.doc_id))
        if kind not in _VALUE_KINDS and item.title and _novel(item.title, query_terms):
            out.append(_Candidate(re.sub(r"\s*\(.*\)$", "", item.title),
                                  (0.2 + best_sentence) * discount * TITLE_WEIGHT, item.doc_id))
    return out


def find(sub_query: str, evidence: Sequence[Evidence]) -> Finding:
    """The best candidate answer to ``sub_query`` in ``evidence``; an empty finding (with the
    reason) when the evidence holds no candidate."""
    top = sorted(evidence, key=lambda e: -e.score)[:TOP_EVIDENCE]
    totals: dict[str, _Candidate] = {}
    for cand in _candidates(sub_query, top):
        key = " ".join(words(cand.text))
        seen = totals.get(key)
        # Repetition across sentences and documents is evidence too: add a share of it.
        score = cand.score if seen is None else max(seen.score, cand.score) + 0.25 * min(
            seen.score, cand.score)
        keep = cand if seen is None or cand.score > seen.score else seen
        totals[key] = _Candidate(keep.text, score, keep.doc_id)
    if not totals:
        return Finding(text="", reason="no candidate answer in the evidence")
    ranked = sorted(totals.values(), key=lambda c: -c.score)
    best = ranked[0]
    others = [c.text for c in ranked[1:] if c.score >= ALTERNATIVE_SHARE * best.score]
    return Finding(text=best.text, doc_ids=[best.doc_id],
                   alternatives=others[:FINDING_ALTERNATIVES],
                   reason=f"{_kind(sub_query)} candidate scoring {best.score:.2f} of "
                          f"{len(totals)} in the top {len(top)} evidence items")
