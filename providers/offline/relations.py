"""Which word of a sub-query relates the thing it asks for to the rest, and how close a
candidate answer stands to the same word in the evidence: of several names in one sentence,
the one the sentence relates as the sub-query does is its answer ("was PRODUCED by a man" ->
"…, produced by Trent Reznor of Nine Inch Nails", not the film named earlier). Used by the
finder to score its candidates."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import NamedTuple

from ragq.orchestration.text import stem, words
from ragq.providers.offline.lexicon import key_terms

RELATION_WEIGHT = 1.5  # a candidate right next to the word relating the asked thing
RELATION_REACH = 6  # words between that relation word and a candidate that still count
NEARBY_WEIGHT = 0.3  # the same for any other key term of the sub-query: a tie-breaker


_DETERMINER = frozenset({"a", "an", "the", "what", "which", "whose"})
_RELATIVE_PRONOUN = frozenset({"that", "which", "who", "whom"})


class Relation(NamedTuple):
    """The stemmed words that relate the asked-for thing to the rest of a sub-query.
    ``leads``: words the answer follows ("was PRODUCED by a man" -> "produced by Trent
    Reznor"); ``trails``: words the answer precedes ("the magazine that CALLED Qvwm" ->
    "Linux Format called Qvwm")."""

    leads: frozenset[str] = frozenset()
    trails: frozenset[str] = frozenset()


def relation_terms(query: str, head: str) -> Relation:
    """The words just before the asked-for noun phrase (the nearest key term: "record was
    ISSUED by a label") and those of a relative clause just after it ("the magazine that
    CALLED Qvwm"). Evidence says the same relation with the answer beside the same word."""
    tokens = words(query)
    if not head or head not in tokens:
        return Relation()
    at = len(tokens) - 1 - tokens[::-1].index(head)
    start = at
    while start > 0 and at - start < 4 and tokens[start - 1] not in _DETERMINER:
        start -= 1
    start = max(0, start - 1)  # the determiner itself
    allowed = set(key_terms(query)) - {stem(head)}
    before = [stem(w) for w in tokens[max(0, start - 4) : start] if stem(w) in allowed]
    after = tokens[at + 1 : at + 4]
    trails = {stem(w) for w in after[1:] if stem(w) in allowed} \
        if after and after[0] in _RELATIVE_PRONOUN else set()
    return Relation(frozenset(before[-1:]), frozenset(trails))


def _gap_after(before: list[str], terms: AbstractSet[str]) -> int | None:
    """Words between the nearest of ``terms`` in ``before`` (the stemmed words up to a
    candidate, at most RELATION_REACH + 1) and the candidate, or None."""
    gaps = [len(before) - 1 - i for i, w in enumerate(before) if w in terms]
    return min(gaps) if gaps and min(gaps) <= RELATION_REACH else None


def _gap_before(after: list[str], terms: AbstractSet[str]) -> int | None:
    """Words between a candidate's end and the nearest of ``terms`` in ``after`` (the
    stemmed words after it, at most 3), or None."""
    return next((i for i, w in enumerate(after) if w in terms), None)


def _weight(gap: int | None, weight: float) -> float:
    return 0.0 if gap is None else weight / (1 + gap)


def proximity_fit(sentence: str, offset: int, length: int, relation: Relation,
                  terms: AbstractSet[str]) -> float:
    """A candidate on the right side of a relation word of the sub-query gains up to
    RELATION_WEIGHT, beside any other of its key terms up to NEARBY_WEIGHT, each divided by
    1 + the words between: of several names in one sentence, the one the sentence relates as
    the sub-query does is its answer ("stars Palash Sen, Ira Dubey…")."""
    before = [stem(w) for w in words(sentence[:offset])][-RELATION_REACH - 1 :]
    after = [stem(w) for w in words(sentence[offset + length :])][:3]
    related = max(_weight(_gap_after(before, relation.leads), RELATION_WEIGHT),
                  _weight(_gap_before(after, relation.trails), RELATION_WEIGHT))
    others = terms - relation.leads - relation.trails
    gaps = [g for g in (_gap_after(before, others), _gap_before(after, others)) if g is not None]
    return 1.0 + related + _weight(min(gaps) if gaps else None, NEARBY_WEIGHT)
