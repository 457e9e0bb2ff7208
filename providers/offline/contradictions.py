"""Conflicting evidence: two sentences from different chunks that say the same thing
about the same subject with a different number, date or duration ("refunds within 14 days" vs
"refunds within 30 days"). Reported, never averaged.

The same wording is not enough: the subject each sentence is about (the names of its chunk's
title, its section heading and the sentence, ``subjects``) must be the same too, so a catalogue
("Annual fee: $0.00" on one card's page, "$50.00" on another's) or two people's birth years is
no conflict; so must what the numbers count ("4 personal accounts" and "6 business accounts"
are two limits), and pages whose titles say the same of two things ("Closing personal
accounts", "Closing business accounts") are about two subjects.

Code, example payloads and logs state no facts (two examples may set ``max_tokens`` to 1 and to
1024): their lines are never claims, and a number inside inline code is a literal of an
example, not a value. Nor is a number the page's title or the subject's name carries (the
"2003–04" of a season's page, the "40" of the "Heinkel HD 40"): it says which thing the page is
about, not what it says of it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragq.orchestration.conflicts import same_subject
from ragq.orchestration.text import STOPWORDS, content_words, stem
from ragq.providers.offline.lexicon import is_heading, sentences
from ragq.providers.offline.subjects import sibling_titles, subject
from ragq.schemas.flow import Contradiction, Evidence

_QUANTITY = re.compile(
    r"\b(\d+(?:[.,]\d+)?)\s*(%|percent|seconds?|minutes?|hours?|days?|weeks?|months?|years?|"
    r"tokens?|requests?|mb|gb|kb|dollars?|usd|times)?\b", re.I)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_FENCED = re.compile(r"```.*?(?:```|\Z)", re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_CODE_LINE = re.compile(
    r"[{}]|\w\s*=\s*[\w\"'\[{(.-]|[\"'][\w.-]+[\"']\s*:|\w\((?:|[^)]{3,})\)|^\s*(?:\$|>>>|#!|curl\s|"
    r"import\s|from\s+\S+\s+import\s|def\s|class\s|const\s|let\s|var\s)"
    r"|\b\d{1,2}:\d{2}:\d{2}\b|\b(?:ERROR|WARN|WARNING|INFO|DEBUG|TRACE)\b|HTTP/\d|\w\.\w+\(|\w\[\d*\]|\)\.\w")
_COUNTED = re.compile(r"[^\S\n]*((?:[A-Za-z][A-Za-z'-]*[^\S\n]*){1,4})")
_HEADING_MARK = re.compile(r"^\s*#{1,6}\s+")
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")
SAME_CLAIM = 0.6  # Jaccard of the sentences' content words, numbers taken out
MIN_SHARED = 2  # content words both must share besides the quantity


@dataclass(frozen=True)
class _Claim:
    sentence: str
    doc_id: str
    chunk_id: str
    title: str
    subject: str
    frame: frozenset[str]
    values: tuple[tuple[str, str], ...]  # (number, unit)


def _unit(raw: str | None) -> str:
    return stem((raw or "").lower().rstrip("s")) if raw else ""


def counted(prose: str, end: int, raw_unit: str | None) -> str:
    """What the number ending at ``end`` counts or measures: the words right after it, up to
    the first stopword or punctuation ("4 personal checking accounts", "14 days of purchase":
    "days"), else its unit sign ("%"). Two numbers of different things never conflict."""
    if prose[end:].lstrip().startswith("%"):
        return "%"
    words = _COUNTED.match(prose, end)
    phrase = []
    for word in (words.group(1).split() if words else []):
        if word.lower() in STOPWORDS:
            break
        phrase.append(_unit(word))
    return " ".join(phrase) or _unit(raw_unit)


def code_like(line: str) -> bool:
    """Whether a line reads as code, a payload or a log line rather than prose: braces, an
    assignment or keyword argument, a quoted key, a call, an index or a chained attribute, a
    shell or REPL prompt, a clock time or a log level."""
    return bool(_CODE_LINE.search(line))


def _section_heading(line: str) -> bool:
    """A heading a section's sentences stand under: a markdown heading, or a short line
    without closing punctuation that is no list item and carries no number."""
    if _HEADING_MARK.match(line):
        return True
    return is_heading(line) and not _LIST_ITEM.match(line) and not re.search(r"\d", line)


def sections(text: str) -> list[tuple[str, str]]:
    """``text`` without its fenced code, cut at headings: (heading, the prose under it)
    pairs in order ("" for what stands before the first heading)."""
    out: list[tuple[str, str]] = []
    heading, lines = "", list[str]()
    for line in _FENCED.sub("\n", text).split("\n"):
        if _section_heading(line):
            out.append((heading, "\n".join(lines)))
            heading, lines = _HEADING_MARK.sub("", line).strip(), []
        elif not code_like(line):
            lines.append(line)
    out.append((heading, "\n".join(lines)))
    return [(h, body) for h, body in out if body.strip()]


def _claims(context: Sequence[Evidence]) -> list[_Claim]:
    out = []
    for item in context:
        for heading, body in sections(item.text):
            for sentence in sentences(body):
                if code_like(sentence):
                    continue
                prose = _INLINE_CODE.sub(" ", sentence)
                about = subject(sentence, heading=heading, title=item.title, body=item.text)
                names = _NUMBER.findall(f"{item.title} {about}")
                values = tuple((m.group(1), counted(prose, m.end(1), m.group(2)))
                               for m in _QUANTITY.finditer(prose) if m.group(1) not in names)
                if not values:
                    continue
                frame = frozenset(stem(w) for w in content_words(_QUANTITY.sub(" ", prose)))
                out.append(_Claim(sentence, item.doc_id, item.chunk_id, item.title, about,
                                  frame, values))
    return out


def _conflict(a: _Claim, b: _Claim) -> bool:
    if not same_subject(a.subject, b.subject) or sibling_titles(a.title, b.title):
        return False
    shared = a.frame & b.frame
    if len(shared) < MIN_SHARED or len(shared) / len(a.frame | b.frame) < SAME_CLAIM:
        return False
    units_a = {u: n for n, u in a.values}
    units_b = {u: n for n, u in b.values}
    common = set(units_a) & set(units_b)
    return bool(common) and any(units_a[u] != units_b[u] for u in common) and (
        set(a.values) != set(b.values))


def detect(context: Sequence[Evidence]) -> list[Contradiction]:
    """Pairs of claims from different chunks about the same subject that share their wording
    but not their numbers; each names its sides' subject in ``subjects``."""
    claims = _claims(context)
    found: list[Contradiction] = []
    for i, a in enumerate(claims):
        for b in claims[i + 1 :]:
            if a.chunk_id == b.chunk_id or not _conflict(a, b):
                continue
            topic = " ".join(sorted(a.frame & b.frame))
            found.append(Contradiction(
                topic=topic, statements=[a.sentence, b.sentence], doc_ids=[a.doc_id, b.doc_id],
                chunk_ids=[a.chunk_id, b.chunk_id], subjects=[a.subject, b.subject],
                reason=f"same claim, different values: {a.values} vs {b.values}"))
    return found
