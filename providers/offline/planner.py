"""Heuristic decomposition: comparisons, several questions in one, and nested
descriptions become sub-queries; anything else stays one sub-query.

The decomposers form a registry tried in order; the first that recognises the question's shape
writes the plan. Plans are proposals: orchestration.plan validates them like any model's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragq.orchestration.text import content_words, words
from ragq.providers.offline.lexicon import GENERIC, WH_WORDS, entities, relational_noun
from ragq.providers.offline.shapes import (
    COMPARATIVE,
    comparison_pair,
    conjunction_parts,
    focus_split,
)
from ragq.providers.offline.structure import decompose_chain, normalize_heads
from ragq.schemas.flow import Plan, PlannedSubQuery, Strategy

Decomposer = Callable[[str, int], Plan | None]

_COMPARISON_WORDS = frozenset({"both", "either", "neither", "same", "versus", "vs", "compared",
                               "compare", "difference", "differences", "between", "or", "and",
                               "key", "terms"})
_ANAPHORA = re.compile(r"\b(?:this|that|these|those|it|its|they|them|their|such)\b", re.I)


def _compare(question: str, limit: int) -> Plan | None:
    pair = comparison_pair(question)
    if pair is None or limit < 2:
        return None
    own = {w for side in pair for w in words(side)}
    attribute = " ".join(w for w in content_words(question) if w not in own
                         and w not in _COMPARISON_WORDS | WH_WORDS | GENERIC)
    subs = [PlannedSubQuery(text=f"{side} {attribute}".strip(),
                            reason=f"the compared fact for {side!r}") for side in pair]
    return Plan(sub_queries=subs, strategy=Strategy.COMPARE,
                reason=f"comparison of {pair[0]!r} and {pair[1]!r}")


_COMPARATIVES = frozenset({"earlier", "later", "first", "last", "older", "younger", "elder",
                           "oldest", "youngest", "more", "most", "less", "fewer", "longer",
                           "shorter", "taller", "bigger", "larger", "smaller", "higher", "lower",
                           "earliest", "latest", "same", "share", "shared"})
# What a comparative of age or order asks of each side.
_ASKS_FOR = {"older": "born", "younger": "born", "elder": "born", "oldest": "born",
             "youngest": "born"}
# Comparatives of time: each side's fact is a date, so its sub-query asks "when".
_TEMPORAL = frozenset({"earlier", "later", "first", "last", "older", "younger", "elder",
                       "oldest", "youngest", "earliest", "latest", "sooner", "before", "after"})
# Life events whose question English forms irregularly.
_WHEN = {"born": "When was {} born?", "died": "When did {} die?", "dead": "When did {} die?"}


def _fact_of(side: str, attribute: list[str], question: str) -> str:
    """The sub-query for one side's compared fact: "When did {0} die?" when the comparison
    is one of time, else the side and what is compared ("{0} country")."""
    text = " ".join(dict.fromkeys(attribute))
    if not _TEMPORAL & set(words(question.lower())):
        return f"{side} {text}"
    if len(attribute) == 1 and attribute[0] in _WHEN:
        return _WHEN[attribute[0]].format(side)
    return f"When {side} {text}"
_TYPE_AFTER_WH = re.compile(r"\b(?:which|what)\s+(\w+)", re.I)
# Where English puts the related entity of a compared thing: "whose author", "the director
# who died", "the directors of A (and B)".
_WHOSE = re.compile(r"\bwhose\s+(\w+)", re.I)
_THE_ONE_WHO = re.compile(r"\bthe\s+(\w+)\s+(?:who|that|which|whom)\b", re.I)
_WHICH_ONES = re.compile(r"\b(?:which|what)\s+\w+(?:'s|’s|s'|s’)\s+(\w+)", re.I)


def _relation(question: str, first: str) -> str | None:
    """The relational noun that leads from each compared thing to what is compared, if the
    question is built around one."""
    of_first = re.search(rf"\bthe\s+(\w+)\s+of\s+(?:the\s+)?{re.escape(first)}", question, re.I)
    for found in (_WHOSE.search(question), _WHICH_ONES.search(question),
                  _THE_ONE_WHO.search(question), of_first):
        if found and relational_noun(found.group(1)):
            word = found.group(1).lower()
            return word[:-1] if word.endswith("s") and relational_noun(word[:-1]) else word
    return None


def _compare_through(question: str, limit: int) -> Plan | None:
    """A comparison made through a related entity ("Which film has the director who died
    earlier, A or B?", "Whose author was born first, A or B?", "Which novel's author was born
    earlier, A or B?"): for each side, find the related entity, then ask its attribute of it;
    the comparison is made over the chain ends."""
    pair = comparison_pair(question)
    if pair is None or limit < 4:
        return None
    relation = _relation(question, pair[0])
    if relation is None:
        return None
    own = {w for side in pair for w in words(side)}
    kind = _TYPE_AFTER_WH.search(question)
    skip = own | _COMPARISON_WORDS | WH_WORDS | GENERIC | {kind.group(1).lower() if kind else ""}
    candidates = [w for w in content_words(question) if w not in skip
                  and w.rstrip("s") != relation]
    attribute = [_ASKS_FOR.get(w, w) for w in candidates
                 if w not in _COMPARATIVES or w in _ASKS_FOR]
    if not attribute:
        return None
    subs = [PlannedSubQuery(text=f"the {relation} of {side}",
                            reason=f"the {relation} of {side!r}") for side in pair]
    subs += [PlannedSubQuery(text=_fact_of(f"{{{i}}}", attribute, question),
                             depends_on=[i], reason=f"the compared fact of {side!r}'s {relation}")
             for i, side in enumerate(pair)]
    return Plan(sub_queries=subs, strategy=Strategy.COMPARE,
                reason=f"comparison of {pair[0]!r} and {pair[1]!r} through their {relation}")


def _topic(part: str) -> str:
    """What a part is about, to resolve "this"/"it" in the parts after it."""
    named = entities(part)
    if named:
        return " ".join(named[:2])
    return " ".join([w for w in content_words(part) if w not in WH_WORDS][:4])


def _conjunction(question: str, limit: int) -> Plan | None:
    parts = conjunction_parts(question)[:limit]
    if len(parts) < 2:
        return None
    topic = _topic(parts[0])
    subs = []
    for index, part in enumerate(parts):
        text = f"{part} ({topic})" if index and _ANAPHORA.search(part) and topic else part
        subs.append(PlannedSubQuery(text=f"{text}?", reason=f"part {index + 1} of the question"))
    return Plan(sub_queries=subs, strategy=Strategy.AGGREGATE,
                reason=f"{len(parts)} questions joined into one")


# A choice over a family of things against stated requirements, said with a verb of choosing
# or wanting ("I want a card with a foreign fee of 1.5% or less, ... and virtual card
# management"); a wh-question about one thing is no choice.
_CHOICE = re.compile(
    r"\b(?:looking for|look for|seeking|want(?:s|ed)?|need(?:s|ed)?|choose|choosing|pick|"
    r"recommend|suggest|interested in|find (?:me |us )?)\s+"
    r"(?:(?:is|are)\s+)?(?:(?:a|an|the|one|some|any)\s+)?(?:(?:best|right|good|single|new)\s+)?"
    r"(?P<family>[a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,3}?)\s+"
    r"(?P<needs>(?:with|that|which|without|having|offering)\b.+)$", re.I)
_REQUIREMENT_SPLIT = re.compile(r"\s*(?:,\s*(?:and|or)\s+|;\s*|,\s*|\s+and\s+(?:a|an|the|no)"
                                r"\s+|\s+and\s+(?=\w+\s+\w+))", re.I)
_REQUIREMENT_LEAD = re.compile(r"^(?:with|that|which|having|offering|has|have|gives?|offers?|"
                               r"includes?|a|an|the|you|me|us|them)\s+", re.I)


def _choice(question: str, limit: int) -> Plan | None:
    """A choice: find the family's candidates (its pages), then search each stated
    requirement across the family, so every candidate's fact for it can be compared."""
    found = _CHOICE.search(question.rstrip(" ?.!"))
    if found is None or limit < 2:
        return None
    family = found.group("family").strip()
    if family.lower() in GENERIC or not content_words(family) or " of " in f" {family} ":
        return None
    needs = [n.strip() for n in _REQUIREMENT_SPLIT.split(found.group("needs")) if n.strip()]
    for _ in range(3):  # "that gives you the …": each lead word in turn
        needs = [_REQUIREMENT_LEAD.sub("", n).strip() for n in needs]
    needs = [n for n in dict.fromkeys(needs) if content_words(n)][: limit - 1]
    if not needs:
        return None
    subs = [PlannedSubQuery(text=f"{family} types and options",
                            reason=f"the candidates: every {family} on offer")]
    subs += [PlannedSubQuery(text=f"{family} {need}", reason=f"requirement: {need}")
             for need in needs]
    return Plan(sub_queries=subs, strategy=Strategy.COMPARE,
                reason=f"a choice of {family} against {len(needs)} requirement(s)")


def _focus(question: str, limit: int) -> Plan | None:
    split = focus_split(question)
    if split is None or limit < 2:
        return None
    first, second = split
    return Plan(sub_queries=[
        PlannedSubQuery(text=first, reason="identify the entity the question is about"),
        PlannedSubQuery(text=second, depends_on=[0], reason="ask the question of that entity"),
    ], strategy=Strategy.CHAIN, reason="a statement whose last entity carries the question")


def _chain(question: str, limit: int) -> Plan | None:
    hops: list[str] = []
    final = decompose_chain(normalize_heads(question.strip()), hops, max_hops=limit - 1)
    if not hops:
        return None
    sides = _compared_sides(final)
    if sides and len(hops) + len(sides) <= limit:
        return _compared_over(hops, sides)
    texts = [*hops, final]
    subs = [
        PlannedSubQuery(
            text=text,
            depends_on=sorted({int(m) for m in re.findall(r"\{(\d+)\}", text)}),
            reason="resolve the described entity" if i < len(hops) else "answer the question",
        )
        for i, text in enumerate(texts)
    ]
    return Plan(sub_queries=subs, strategy=Strategy.CHAIN,
                reason=f"{len(hops)} nested description(s) resolved before the question")


def _compared_sides(final: str) -> list[tuple[int, str]] | None:
    """When what remains of a chain compares its hops ("Who was born first, {1} or {0}?"):
    each compared hop with the sub-query asking its compared fact ("When was {1} born?")."""
    placeholders = sorted({int(m) for m in re.findall(r"\{(\d+)\}", final)})
    if len(placeholders) < 2 or not COMPARATIVE.search(final):
        return None
    attribute = [_ASKS_FOR.get(w, w) for w in content_words(re.sub(r"\{\d+\}", " ", final))
                 if (w not in _COMPARATIVES or w in _ASKS_FOR)
                 and w not in _COMPARISON_WORDS | WH_WORDS | GENERIC]
    if not attribute:
        return None
    return [(i, _fact_of(f"{{{i}}}", attribute, final)) for i in placeholders]


def _compared_over(hops: list[str], sides: list[tuple[int, str]]) -> Plan:
    subs = [PlannedSubQuery(text=hop, depends_on=sorted({int(m) for m in re.findall(
        r"\{(\d+)\}", hop)}), reason="resolve the described entity") for hop in hops]
    subs += [PlannedSubQuery(text=fact, depends_on=[i], reason=f"the compared fact of hop {i}")
             for i, fact in sides]
    return Plan(sub_queries=subs, strategy=Strategy.COMPARE,
                reason="entities described by their relations, compared on what each has")


DECOMPOSERS: dict[str, Decomposer] = {
    "choice": _choice,
    "compare through a related entity": _compare_through,
    "compare": _compare,
    "conjunction": _conjunction,
    "chain": _chain,
    "focus": _focus,
}


def plan(question: str, *, max_sub_queries: int) -> Plan:
    """A plan for ``question`` with at most ``max_sub_queries`` sub-queries (at least one)."""
    limit = max(1, max_sub_queries)
    if limit > 1:
        for decompose in DECOMPOSERS.values():
            found = decompose(question, limit)
            if found is not None:
                return found
    return Plan(sub_queries=[PlannedSubQuery(text=question.strip() or question,
                                             reason="answered by one search")],
                strategy=Strategy.SINGLE, reason="no compound shape recognised")
