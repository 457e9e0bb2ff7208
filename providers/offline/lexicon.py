"""English surface heuristics the offline roles share: sentences, named-entity spans, key terms
and coverage. Capitalisation carries most of the signal (no tagger, no gazetteer), so the rules
stay general: they read the form of the text, never a particular dataset."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ragq.orchestration.text import STOPWORDS, content_words, stem, words

_TOKEN = re.compile(r"\{\d+\}|\w(?:[\w'’.\-&]*\w)?")
_SENTENCE = re.compile(r"(?<=[.!?])[\"”')\]]?\s+(?=[\"“(\[]?[A-Z0-9#])|\n{2,}|\n(?=[-*•#])")
_HEADING_MARK = re.compile(r"^#{1,6}\s+")
_LINE_END = re.compile(r"[.!?:;,]['\"”)\]]?$")
MAX_HEADING_WORDS = 8
_ABBREVIATION = re.compile(r"(?:\b(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Gen|Col|Lt|No|vs|etc|Inc|Co|Ltd)"
                           r"|\b[A-Z]|\b(?:[A-Z]\.)+[A-Z])\.$")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$")
CONNECTORS = frozenset({"of", "the", "de", "la", "le", "von", "van", "der", "du", "da", "del",
                        "y", "&"})
WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "when", "where", "why", "how"})
# Capitalised words that open questions or sentences without naming anything.
_OPENERS = STOPWORDS | WH_WORDS | frozenset({
    "name", "list", "describe", "explain", "tell", "give", "according", "besides", "apart",
    "in", "on", "at", "from", "during", "since", "for", "if", "after", "before", "following",
    "however", "currently", "although", "today", "later", "furthermore", "additionally",
    "meanwhile", "despite", "unlike", "several", "many", "instead", "therefore", "thus",
    "originally", "initially", "finally", "eventually", "previously", "recently", "notably",
})
MONTHS = frozenset(re.findall(r"\w+", "january february march april may june july august "
                                      "september october november december"))
# Words that carry the question's form, not its topic: never required of the evidence.
GENERIC = frozenset(re.findall(r"\w+", """name named names kind kinds type types called known
    found located locate took take takes taken place happen happened happens occur occurred
    usual usually exactly specific specifically some many much main example examples thing
    things way ways mean means meant according documentation refer refers referred term"""))


_AGENTIVE = re.compile(r"^\w{3,}(?:er|or|ist|ian|ant|ent)s?$")
_NOT_AGENTIVE = frozenset(re.findall(r"\w+", """number order water border center centre other
    power chapter quarter letter meter color colour error sector factor character later former
    latter content component document element environment requirement event percent moment
    statement parameter filter header footer buffer marker corner user's answer paper matter
    summer winter october november december september register cluster layer folder differ
    offer enter consider deliver remember render suffer transfer prefer refer cover discover
    recover wonder bother gather trigger encounter alter lower deter"""))
RELATIONAL = frozenset(re.findall(r"\w+", """wife husband spouse partner father mother son
    daughter brother sister child children parent parents sibling family king queen prince
    princess heir successor predecessor capital birthplace hometown home country state city
    county town village nation region province continent island river location headquarters
    era period century year date company band team club label firm party network station
    studio school university college album film movie song book novel series show single game
    episode sequel opera ballet play language currency religion star stars creator cast"""))


def relational_noun(word: str) -> bool:
    """Whether ``word`` names a role or relation of an entity ("composer", "birthplace",
    "wife", "label"): the nouns that make "the X of Y" or "Y's X" a lookup of its own."""
    word = word.lower()
    if word in RELATIONAL or word.rstrip("s") in RELATIONAL:
        return True
    return bool(_AGENTIVE.match(word)) and word.rstrip("s") not in _NOT_AGENTIVE and not (
        word.endswith(("ment", "ments")))


@dataclass(frozen=True)
class Span:
    """A named-entity span: its text and character offsets in the source."""

    text: str
    start: int
    end: int


def is_heading(line: str) -> bool:
    """A title or heading line: short and without closing punctuation. It is a piece of its
    own, never the start of the sentence under it."""
    line = line.strip()
    return bool(line) and len(line.split()) <= MAX_HEADING_WORDS and not _LINE_END.search(line)


def _blocks(text: str) -> list[str]:
    blocks: list[str] = []
    lines: list[str] = []
    for line in text.split("\n"):
        if is_heading(line):
            blocks += ["\n".join(lines), line]
            lines = []
        else:
            lines.append(line)
    return [*blocks, "\n".join(lines)]


def sentences(text: str) -> list[str]:
    """``text`` cut at sentence ends, paragraph breaks and heading lines; blank pieces and
    markdown heading marks dropped; a piece ending in an abbreviation ("Mr.", "U.S.", "J.") is
    joined to the next."""
    out: list[str] = []
    for block in _blocks(text):
        for piece in _SENTENCE.split(block):
            piece = _HEADING_MARK.sub("", (piece or "").strip())
            if not piece:
                continue
            if out and _ABBREVIATION.search(out[-1]):
                out[-1] = f"{out[-1]} {piece}"
            else:
                out.append(piece)
    return out


def _capitalised(token: str) -> bool:
    return token[:1].isupper() or (token.startswith("{") and token.endswith("}"))


def entity_spans(text: str) -> list[Span]:
    """Runs of capitalised words (with inner connectors like "of"/"the"), digits continuing a
    run, quoted titles and ``{n}`` placeholders. A possessive ends its run; punctuation breaks
    one. Capitalised stopwords (sentence openers) never start a run."""
    spans: list[Span] = [Span(m.group(1).strip(), m.start(1), m.end(1))
                         for m in _QUOTED.finditer(text)]
    tokens = list(_TOKEN.finditer(text))
    run: list[re.Match[str]] = []

    def close() -> None:
        while run and run[-1].group().lower() in CONNECTORS:
            run.pop()
        if run:
            start, end = run[0].start(), run[-1].end()
            spans.append(Span(_POSSESSIVE.sub("", text[start:end]), start, end))
        run.clear()

    for i, tok in enumerate(tokens):
        word = tok.group()
        gap = text[tokens[i - 1].end() : tok.start()] if i else " "
        if run and gap.strip():
            close()
        starts = _capitalised(word) and (run or word.lower() not in _OPENERS)
        if starts or (run and (word.lower() in CONNECTORS or word[:1].isdigit())):
            run.append(tok)
        else:
            close()
        if run and _POSSESSIVE.search(word):
            close()
    close()
    inside = [s for s in spans if not any(o is not s and o.start <= s.start and s.end <= o.end
                                          and (o.end - o.start) > (s.end - s.start) for o in spans)]
    return sorted(inside, key=lambda s: s.start)


def entities(text: str) -> list[str]:
    """Distinct named-entity strings of ``text`` in order (placeholders excluded)."""
    found = (s.text for s in entity_spans(text) if not s.text.startswith("{"))
    return list(dict.fromkeys(e for e in found if e.lower() not in MONTHS))


def term_set(text: str) -> set[str]:
    """Stemmed words of ``text``: what coverage is measured against."""
    return {stem(w) for w in words(text)}


def key_terms(text: str) -> list[str]:
    """Content words of ``text`` (stemmed), minus words inside its entities, question words and
    placeholders: the descriptive part of a query."""
    inside = {stem(w) for e in entities(text) for w in words(e)}
    plain = [w for w in content_words(re.sub(r"\{\d+\}", " ", text)) if w not in GENERIC]
    out = [stem(w) for w in plain]
    return list(dict.fromkeys(w for w in out if w not in inside and w not in WH_WORDS))


def entity_present(entity: str, terms: set[str]) -> bool:
    """Whether most of the entity's own words (not its connectors) occur in ``terms``."""
    own = [stem(w) for w in words(entity) if w not in CONNECTORS]
    if not own:
        return True
    return sum(w in terms for w in own) / len(own) >= 0.6


def coverage(query: str, texts: Iterable[str]) -> tuple[float, list[str]]:
    """Share of the query's entities (weight 2) and key terms (weight 1) found in ``texts``,
    and the missing ones, entities first, each term as the query spells it: the missing terms
    become follow-up and rewritten queries, and a stem ("compar", "integrat") embeds as noise."""
    spelled: dict[str, str] = {}
    for word in content_words(query):
        spelled.setdefault(stem(word), word)
    terms: set[str] = set()
    for text in texts:
        terms |= term_set(text)
    missing: list[str] = []
    total = got = 0.0
    for entity in entities(query):
        total += 2
        if entity_present(entity, terms):
            got += 2
        else:
            missing.append(entity)
    for term in key_terms(query):
        total += 1
        if term in terms:
            got += 1
        else:
            missing.append(spelled.get(term, term))
    return (got / total if total else 1.0), missing


def estimate_words(*texts: str) -> int:
    """Word count: the token estimate every offline Usage reports."""
    return sum(len(t.split()) for t in texts)
