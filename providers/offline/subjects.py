"""What a statement is about, read offline from where it stands: the names its chunk's title,
its section heading and the sentence itself give (``orchestration.conflicts`` compares them).

Capitalisation is the signal, read where it means something:

- in running text a capitalised span is a name, except a lone plain word opening the sentence
  ("Unused prepaid credits ..."), which is capitalised because it opens it;
- a title or heading written in title case ("Rates and Fees You Agree To") capitalises every
  word, so there only marked words (EcoCard, ATM, GPT4), the head of a "Name: aspect" line and
  spans the chunk's own text also capitalises count as names, and a lone word only when its
  capitals mark it or the text confirms it;
- a line in sentence case ("Bronze Saver Account specifications") reads like running text,
  except that a lone word opening it ("FAQ", "Python") counts only when the chunk's text uses
  it as a name too, or its capitals mark it (EcoCard).

Numbers and months are values, never part of a subject.
"""

from __future__ import annotations

import re

from ragq.orchestration.text import content_words, stem
from ragq.providers.offline.lexicon import CONNECTORS, MONTHS, entity_spans

_MARKED = re.compile(r"^(?:[A-Z][A-Z0-9&]+|[A-Za-z]+[a-z][A-Z]\w*|[A-Za-z]+\d\w*)$")
_WORD = re.compile(r"[A-Za-z][\w'’&.\-]*")
_HEAD = re.compile(r"^(.{2,60}?)\s*(?::|\s[-–—|]\s)\s*\S")
_VALUE = re.compile(r"^[\d.,:/%$€£]+$")
MIN_TITLE_CASE_WORDS = 2  # capitalised long words that make a line title case
LONG_WORD = 4  # shorter words ("for", "and", "To") are left lowercase or not by habit
MIN_SHARED_TITLE_WORDS = 2  # one shared word ("accounts") makes no parallel titles


def _plain(word: str) -> bool:
    """A capitalised ordinary word: what a sentence opener looks like."""
    return bool(re.fullmatch(r"[A-Z][a-z'’]*", word))


def _camel(word: str) -> bool:
    """A word whose capitals or digits mark it as a name whatever its place (EcoCard, GPT4);
    an all-capitals word may be a name (ATM) or a kind of page (FAQ), so it is not marked
    here."""
    return bool(re.fullmatch(r"[A-Za-z]+[a-z][A-Z]\w*|[A-Za-z]+\d\w*", word))


def _is_name(text: str) -> bool:
    """Whether a span names something, not a value (a number, a month, a date)."""
    own = [w for w in text.split() if w.lower() not in CONNECTORS]
    return any(not _VALUE.match(w) and w.lower() not in MONTHS for w in own)


def title_case(line: str) -> bool:
    """Whether every long word of ``line`` is capitalised (and there are several)."""
    long = [w for w in _WORD.findall(line) if len(w) >= LONG_WORD
            and w.lower() not in CONNECTORS]
    return len(long) >= MIN_TITLE_CASE_WORDS and all(w[:1].isupper() for w in long)


def _opens(span_start: int, text: str) -> bool:
    return not re.search(r"[A-Za-z0-9]", text[:span_start])


def _confirmed(span: str, body: str) -> bool:
    """Whether ``body`` writes ``span`` as a name: several capitalised words, or one that stands
    inside a sentence, after a lowercase word or a comma."""
    if not body:
        return False
    for match in re.finditer(rf"(?<![\w]){re.escape(span)}(?![\w])", body):
        if len(span.split()) > 1 or re.search(r"[a-z,;]\s+$", body[: match.start()]):
            return True
    return False


def sentence_names(sentence: str) -> list[str]:
    """The names a sentence (or a line in sentence case) gives: its capitalised spans, less a
    lone plain word opening it."""
    out = []
    for span in entity_spans(sentence):
        if _opens(span.start, sentence) and _plain(span.text) and " " not in span.text:
            continue
        if _is_name(span.text):
            out.append(span.text)
    return out


def _stands(name: str, body: str) -> bool:
    """Whether a name read off a title or heading stands as one: several words, a marked word
    (EcoCard), or a word the chunk's text also uses as a name ("FAQ" or "Internal" as a
    page's first word name a kind of page, not a thing)."""
    return " " in name or _camel(name) or _confirmed(name, body)


def line_names(line: str, body: str) -> list[str]:
    """The names a title or heading gives; ``body`` (the chunk's text) confirms names a title
    case line cannot show by its capitals."""
    line = line.strip()
    if not line:
        return []
    spans = entity_spans(line)
    if not title_case(line):
        lone = spans[0].text if spans and _opens(spans[0].start, line) else ""
        names = [n for n in sentence_names(line) if n != lone]
        return [lone, *names] if lone and _stands(lone, body) else names
    head = _HEAD.match(line)
    out = [head.group(1)] if head and _is_name(head.group(1)) else []
    out += [w for w in _WORD.findall(line) if _MARKED.match(w)]
    out += [s.text for s in spans if _confirmed(s.text, body) and _is_name(s.text)]
    return list(dict.fromkeys(n for n in out if _stands(n, body)))


def subject(sentence: str, *, heading: str = "", title: str = "", body: str = "") -> str:
    """The subject of ``sentence``: the names its chunk's ``title``, its section ``heading``
    and the sentence give, joined with "; " ("" when none names anything)."""
    names = [*line_names(title, body), *line_names(heading, body), *sentence_names(sentence)]
    return "; ".join(dict.fromkeys(names))


def _title_words(title: str) -> set[str]:
    """The words of the part of a title that names its subject: the head of a "Name: aspect"
    title whose head stands as a name, else the whole title; numbers left out."""
    head = _HEAD.match(title.strip())
    if head and _is_name(head.group(1)) and _stands(head.group(1), ""):
        title = head.group(1)
    return {stem(w) for w in content_words(title) if not any(c.isdigit() for c in w)}


def sibling_titles(a: str, b: str) -> bool:
    """Whether two page titles say the same thing of two different things: each has words the
    other lacks ("personal" / "business" in "Closing personal checking accounts" and "Closing
    business checking accounts") and they share two words or more, at least as many as either
    adds. Of a "Name:
    aspect" title only the name counts ("Nimbus Card: Fees" and "Nimbus Card: Questions" are
    one card's pages). Numbers are
    left out: two editions of one policy are one subject. A title that only adds words to the
    other ("Tom Waits discography") is no sibling: it may be about the same thing."""
    words_a, words_b = _title_words(a), _title_words(b)
    only_a, only_b = words_a - words_b, words_b - words_a
    shared = len(words_a & words_b)
    return bool(only_a and only_b) and shared >= max(MIN_SHARED_TITLE_WORDS, len(only_a),
                                                     len(only_b))
