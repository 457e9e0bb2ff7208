"""Lexical helpers shared by the pure decisions and the offline provider: normalised words,
content words and a near-duplicate measure. Plain regexes, no NLP library, so every caller
gets the same answer on every machine."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
_POSSESSIVE = re.compile(r"['’]s$")
_QUERY_TOKEN = re.compile(r"\{\d+\}|\w+")

STOPWORDS = frozenset(re.findall(r"\S+", """
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom
whose why will with would you your yours yourself yourselves shall may might must upon via per
within without whether either neither yet ever one ones s t don't isn't aren't wasn't weren't
does doesn't did didn't can't cannot also i'm it's what's who's let's
"""))


def words(text: str) -> list[str]:
    """Lowercased word tokens: contractions kept whole, possessive ``'s`` stripped."""
    return [_POSSESSIVE.sub("", w.lower().replace("’", "'")) for w in _WORD.findall(text)]


def stem(word: str) -> str:
    """A crude suffix strip so ``directors``/``director`` and ``founded``/``founder`` meet."""
    for suffix in ("ies", "ing", "ed", "er", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def content_words(text: str) -> list[str]:
    """Non-stopword words of ``text``, lowercased, in order, without repeats."""
    return list(dict.fromkeys(w for w in words(text) if w not in STOPWORDS and len(w) > 1))


def normalize_query(text: str) -> str:
    """The one normal form of a query, for every "is this the same query?" check (plan
    duplicates, retrieval keys, the plan cache, rewrites already tried).

    NFKC (full-width and compatibility forms become plain ones), casefold (``Straße`` meets
    ``strasse``), every run of non-word characters one space; a ``{n}`` placeholder is kept as a
    word of its own, since ``{0}`` and ``{1}`` stand for different findings.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_QUERY_TOKEN.findall(folded))


@lru_cache(maxsize=4096)
def shingles(text: str, size: int = 3) -> frozenset[tuple[str, ...]]:
    """Word ``size``-grams of ``text`` (the whole text when shorter). Cached: deduplication
    compares every item with every kept one, and a job's steps assemble the same evidence
    again and again."""
    tokens = words(text)
    if len(tokens) <= size:
        return frozenset({tuple(tokens)}) if tokens else frozenset()
    return frozenset(tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1))


def near_duplicate(a: str, b: str, threshold: float = 0.85) -> bool:
    """Whether two texts share at least ``threshold`` of their word 3-grams (Jaccard)."""
    sa, sb = shingles(a), shingles(b)
    if not sa or not sb:
        return sa == sb
    # Jaccard is at most min/max of the sizes: most pairs are told apart without a set
    # operation (context assembly compares every item with every kept one).
    small, large = sorted((len(sa), len(sb)))
    if small < threshold * large:
        return False
    shared = len(sa & sb)
    return shared / (len(sa) + len(sb) - shared) >= threshold


@lru_cache(maxsize=1024)
def _stems(query: str) -> frozenset[str]:
    """The stemmed content words of ``query``. Cached: an excerpt weighs every sentence of a
    chunk against the same question."""
    return frozenset(stem(w) for w in content_words(query))


def term_overlap(query: str, text: str) -> float:
    """Share of the query's content words (stemmed) that occur in ``text``: 0.0 to 1.0
    (1.0 for a query without content words)."""
    wanted = _stems(query)
    if not wanted:
        return 1.0
    present = {stem(w) for w in words(text)}
    return len(wanted & present) / len(wanted)


#: Longest ask the flow routes, plans and searches, in characters. A ticket with pasted logs
#: and no question that stands apart is read as one ask of its whole text; searching or
#: planning 20,000 characters helps no retriever, and the heuristic roles slow down with length.
ASK_MAX_CHARS = 1200
#: Longest ticket context (who asks, what they run) the planner reads, in characters.
CONTEXT_MAX_CHARS = 2000


def bounded_ask(text: str, max_chars: int = ASK_MAX_CHARS) -> str:
    """``text`` when it fits ``max_chars``; else its beginning (what the ticket is about) and
    its end (where a question usually stands), cut at spaces and joined by `` … ``."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    head_chars = max_chars * 2 // 3
    head = text[:head_chars]
    head = head.rsplit(" ", 1)[0] if " " in head[head_chars // 2:] else head
    tail = text[-(max_chars - len(head) - 3):]
    tail = tail.split(" ", 1)[1] if " " in tail[: len(tail) // 2] else tail
    return f"{head.rstrip()} … {tail.lstrip()}"
