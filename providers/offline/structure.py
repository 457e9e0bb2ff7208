"""Nested descriptions in a question ("the country where the composer of X was born"): the inner
description must be resolved before the outer one can be searched. Used by the router (is the
question nested?) and the planner (where to cut it). Other compound shapes are in ``shapes``."""

from __future__ import annotations

import re

from ragq.orchestration.text import STOPWORDS, content_words
from ragq.providers.offline.lexicon import WH_WORDS, entity_spans, relational_noun

_DET = r"(?:the|a|an)"
# Head-noun words of a described entity: no prepositions or verbs, at most four words.
_STOP = "(?:" + "|".join(sorted(w for w in STOPWORDS if "'" not in w)) + ")"
_PREPS = r"(?:of|in|into|on|onto|at|by|for|from|to|with|and|or|is|was|are|were|as)"
_HEAD = rf"(?:(?!{_PREPS}\b)(?-i:[a-z0-9])[\w'’-]*\s+){{0,3}}(?!{_PREPS}\b)(?-i:[a-z0-9])[\w'’-]*"
# A head may open with one capitalised adjective: "an English cricketer born in …".
_ADJ_HEAD = rf"(?:(?-i:[A-Z])[\w'’-]*\s+)?{_HEAD}"
_RELATIVE = re.compile(
    rf"\b{_DET}\s+{_ADJ_HEAD}\s+(?:(?:in|of|at|by|on|from|for|with)\s+which|that|which|who|whom"
    rf"|whose|where|when)\b", re.I)
_OF = re.compile(rf"\b{_DET}\s+{_HEAD}\s+of\s+", re.I)
_VERB_WORDS = (r"(?:\w+ed|\w+ing|that|which|who|whom|whose|where|when|and|or|but|has|had|have"
               r"|do|does|did|can|will|would)")
_VERB = r"(?:\w+ed|\w+ing|began|became|was|is|had|made|won|went|took|gave|led|wrote|left|ran|held" \
        r"|grew|came|did|does|has|have|are|were|lived|died|said|got|met|sang|saw|knew|began)"
_POSSESSIVE_HEAD = re.compile(
    rf"^(?:['’]s?)\s+((?:(?!{_VERB}\b|{_PREPS}\b)[a-z][\w-]*\s+)?(?!{_VERB}\b|{_PREPS}\b)[a-z][\w-]*)")
_ADJECTIVE_USE = re.compile(rf"\s+(?!{_PREPS}\b|{_VERB_WORDS}\b|{_STOP}\b)(?-i:[a-z])[\w-]+", re.I)
_CLAUSE_END = re.compile(r"\?|;|,\s+(?:and|but|what|where|who|when|which|how|why)\b"
                         r"|\s+and\s+(?:is|are|was|were|has|had)\b")
_PARTICIPLES = (r"(?:\w+ing|\w+ed|born|known|made|held|built|written|shot|sung|run|won"
                r"|led|given|taken|seen|done|grown|drawn|chosen|spoken)")
_NAME = r"(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*)*"
# A described entity without a relative pronoun: "the country Signmark is from", "the country
# containing Nugegoda", "a cricketer born in Christchurch, New Zealand".
_REDUCED = re.compile(rf"\b{_DET}\s+{_ADJ_HEAD}\s+(?:{_NAME}"
                      r"\s+(?:is|was|are|were)\s+(?:from|in|part\s+of|located\s+in|based\s+in|"
                      rf"a\s+part\s+of|native\s+to)\b|{_PARTICIPLES}\s+(?:by\s+|in\s+)?(?:the\s+)?"
                      r"(?:\{\d+\}|(?-i:[A-Z])[\w'’.-]*(?:\s+(?:of\s+)?(?-i:[A-Z])[\w'’.-]*)*"
                      r"(?:,\s+(?-i:[A-Z])[\w'’.-]*(?:\s+(?-i:[A-Z])[\w'’.-]*)*)?))", re.I)
# Head nouns that describe nothing by themselves: "the name of X" is X, not a hop.
_VACUOUS = frozenset({"name", "names", "number", "kind", "type", "part", "one", "title", "term",
                      "some", "many", "most", "all", "each", "any", "rest", "list", "amount",
                      "north", "south", "east", "west", "side", "edge", "center", "centre",
                      "middle", "top", "bottom", "end", "beginning", "start"})
_TRIVIAL = WH_WORDS | _VACUOUS | {"is", "was", "are", "were", "be", "called", "known", "named"}
_PLACEHOLDER = re.compile(r"\{\d+\}")

def anchored(text: str) -> bool:
    """Whether a description names something to look up: an entity, a placeholder, a number,
    or at least three content words ("the state whose official sport is jousting")."""
    return (bool(entity_spans(text)) or bool(re.search(r"\d", text))
            or len(content_words(text)) >= 4)


def _meaningful_outer(outer: str) -> bool:
    """Whether the question around a cut-out description still asks something of its own."""
    rest = _PLACEHOLDER.sub(" ", outer)
    return any(w not in _TRIVIAL for w in content_words(rest))


_CLAUSE_VERB = re.compile(r"\b(?:is|was|are|were|be|been|has|have|had|do|does|did|can|could|will|"
                          r"would|may|might|must|shall|should|\w+ed|\w+[^s]s)\b", re.I)
# Verbs that resume the main clause after a subject described by a relative clause.
_SUBJECT_RELATIVE = re.compile(r"\s*(?:\w+ed|\w+s|was|is|were|are|has|had|have|won|led|made|"
                               r"became|wrote|played|starred|resigned)\b", re.I)
_MAIN_VERB = re.compile(r"(?:\w+ed|\w+en|make|made|become|join|leave|left|start|end|fall|win|won|"
                        r"begin|open|close|take|enter|invade|gain|declare|adopt|play|host|win|"
                        r"sign|release|form|found|die|live|move|join|get|have|use|hold)\b", re.I)


def _relative_spans(text: str, match: re.Match[str]) -> list[tuple[int, int]]:
    """Candidate extents of the relative clause of ``match``, best first: to the clause end,
    then shorter ones ending after an entity or before a verb that resumes the main clause
    ("When was [the country that produced Fist Power] taken…"). None when the "clause" is two
    words without a verb ("in which California city?": that asks, it does not describe)."""
    end = _CLAUSE_END.search(text, match.end())
    stop = end.start() if end else len(text)
    clause = text[match.end() : stop]
    if len(clause.split()) < 3 and not _CLAUSE_VERB.search(clause):
        return []
    verb_ends: list[int] = []
    for word in re.finditer(r"\s+(?=\w)", clause):
        pos = match.end() + word.start()
        if len(text[match.end() : pos].split()) >= 2 and _MAIN_VERB.match(text, pos + len(
                word.group())):
            verb_ends.append(pos)
    entity_ends = sorted({s.end for s in entity_spans(text) if match.end() < s.end < stop
                          and not re.match(rf"\s+{_PARTICIPLES}\b", text[s.end :], re.I)})
    first = [stop]
    tail = re.search(rf"\s+({_PARTICIPLES})\s*$", clause, re.I)
    if tail and _SUBJECT_RELATIVE.match(clause):
        # "the man that resigned as … born?": the clause has its verb, so a last participle
        # belongs to the question ("In what year was [the man …] born?")
        first = [match.end() + tail.start()]
    return [(match.start(), e) for e in [*first, *verb_ends, *entity_ends]]


def _of_span(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    head = match.group().split()
    if head[-2].lower() in _VACUOUS or not relational_noun(head[-2]):
        return None
    spans = [s for s in entity_spans(text) if s.start >= match.end()]
    # "the composer of [the opera] Silver Lake": a kind-of-thing noun may stand before the name
    after = [s for s in spans if re.fullmatch(
        rf"(?:the\s+)?(?:\d[\w-]*\s+)?(?:(?!{_PREPS}\b|{_VERB_WORDS}\b)(?-i:[a-z])[\w-]*\s+)"
        r"{0,2}", text[match.end() : s.start], re.I)]
    if not after:
        return None
    first = after[0]
    if _PLACEHOLDER.fullmatch(first.text):
        return match.start(), first.end  # "the father of {0}": an earlier hop's finding
    if " " not in first.text and _ADJECTIVE_USE.match(text, first.end):
        # "the birthplace of the Swedish performance artist Ayesha": the adjective opens a
        # description that ends at the name a few words on
        named = [s for s in spans if s.start > first.end and re.fullmatch(
            r"(?:\s+(?-i:[a-z])[\w-]*){1,3}\s+", text[first.end : s.start])]
        return (match.start(), named[0].end) if named else None
    return match.start(), first.end


def _possessive_spans(text: str) -> list[tuple[int, int]]:
    out = []
    for span in entity_spans(text):
        head = _POSSESSIVE_HEAD.match(text[span.end - 2 if text[span.end - 2:span.end] in (
            "'s", "’s") else span.end:])
        if head and relational_noun(head.group(1).split()[-1]):
            start = span.end - 2 if text[span.end - 2 : span.end] in ("'s", "’s") else span.end
            out.append((span.start, start + head.end()))
    return out


def bridge_spans(text: str, *, from_start: bool = True) -> list[tuple[int, int]]:
    """Character spans of embedded descriptions in ``text`` worth resolving first: each names
    an anchor (entity/number/placeholder), holds no question word of its own and leaves the
    rest of the text asking something. Sorted by start. ``from_start=False`` skips spans at
    the very start (a description is not cut out of itself)."""
    found: list[tuple[int, int]] = []
    for pos in range(0 if from_start else 1, len(text)):
        if pos and text[pos - 1].isalnum():
            continue
        for pattern in (_RELATIVE, _REDUCED, _OF):
            match = pattern.match(text, pos)
            if not match:
                continue
            if pattern is _RELATIVE:
                options = _relative_spans(text, match)
            elif pattern is _REDUCED:
                options = [match.span()]
            else:
                options = [o for o in [_of_span(text, match)] if o]
            usable = [o for o in options if _usable(text, o)]
            found.extend(usable[:1])
    found.extend(o for o in _possessive_spans(text)
                 if _usable(text, o) and (from_start or o[0] > 0))
    return sorted(set(found))


def _usable(text: str, span: tuple[int, int]) -> bool:
    start, end = span
    inner = text[start:end]
    inner_words = [w.lower() for w in re.findall(r"\w+", inner)]
    if {"what", "how"} & set(inner_words) or (len(inner_words) > 3 and inner_words[-1] in WH_WORDS):
        return False  # the description holds the question's own focus ("of what city")
    outer = text[:start] + " {9} " + text[end:]
    return (end - start) < len(text.strip()) and anchored(inner) and _meaningful_outer(outer)


_COMPOUND_HEADS = {
    r"\bplace of birth\b": "birthplace", r"\bbirth place\b": "birthplace",
    r"\bcity of birth\b": "birth city",
    r"\bcountry of birth\b": "birth country", r"\bplace of death\b": "death place",
    r"\bcountry of origin\b": "origin country",
    r"\bcountry of citizenship\b": "citizenship country",
}


def normalize_heads(text: str) -> str:
    """Fold "place of birth"-style heads into one noun, so "the place of birth of X" reads as
    one description of X rather than a description of "birth"."""
    for pattern, repl in _COMPOUND_HEADS.items():
        text = re.sub(pattern, repl, text, flags=re.I)
    return text


def decompose_chain(text: str, hops: list[str], *, max_hops: int, inner: bool = False) -> str:
    """Cut nested descriptions out of ``text``, innermost first, appending each to ``hops``
    (with ``{i}`` naming earlier hops) while fewer than ``max_hops`` are cut; returns what
    remains of ``text`` with placeholders. ``inner``: ``text`` is itself a description."""
    spans = bridge_spans(text, from_start=not inner) if len(hops) < max_hops else []
    if not spans:
        return text
    start, end = spans[-1]  # the rightmost starts innermost: English nests to the right
    described = text[start:end].strip(" ,")
    resolved = decompose_chain(described, hops, max_hops=max_hops - 1, inner=True)
    hops.append(resolved)
    outer = f"{text[:start]}{{{len(hops) - 1}}}{text[end:]}"
    return decompose_chain(outer, hops, max_hops=max_hops, inner=inner)
