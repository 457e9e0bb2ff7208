"""Reading a support ticket into its asks, its context and its noise, by the text's form alone.

A ticket is an e-mail: a greeting, background, questions and requests (in prose, numbered or
lettered, one per line or several per paragraph), pasted logs and configuration, a sign-off
and a signature. The rules read that structure, never a particular wording:

- **noise** — fenced and indented blocks, quoted lines (``>``), lines shaped like log records
  or ``key: value`` / ``key=value`` settings, the greeting line, and everything from a sign-off
  (``Thanks``, ``Best``, ``Cheers``, ``Regards`` …, or a ``--`` separator) to the end;
- **asks** — sentences that end with a question mark, and requests in the imperative or the
  polite forms ("please explain …", "can you tell me …", "I need to know …"), with their lead-in
  ("First,", "Question two:", "1.", "b)", "Also,") dropped; a question about the exchange
  itself ("let us know if …", "can you call us?") is not an ask. A question that leans on the
  sentence before it ("… It fails at night. Why does it?") carries that sentence along;
- **context** — the other sentences: who writes, what they run, what they tried.

A text with no ask found is one ask: its own text without the noise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragq.providers.offline.lexicon import sentences
from ragq.schemas.flow import Ask, TicketReading

_FENCE = re.compile(r"^\s*(```|~~~)")
_GREETING = re.compile(r"^\s*(hi|hello|hey|dear|good (morning|afternoon|evening)|greetings)\b"
                       r"[^.?!\n]{0,40}[,!:]?\s*$", re.I)
_SIGN_OFF = re.compile(r"^\s*(thanks|thank you|many thanks|cheers|best|regards|kind regards|"
                       r"best regards|warm regards|sincerely|all the best|thx|ty)\b[^\n]{0,30}$"
                       r"|^\s*--\s*\S*", re.I)
_LOG_LINE = re.compile(r"^\s*(\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|\[?\d\d:\d\d:\d\d|"
                       r"(DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|TRACE|FATAL)\b|"
                       r"Traceback \(most recent call last\)|\s*at [\w.$]+\(|\s*File \")")
_SETTING_LINE = re.compile(r"^\s*[\w.\-\"']{1,40}\s*(:|=)\s*\S[^.?!]*$")
_QUOTE_LINE = re.compile(r"^\s*>")
_LIST_MARK = re.compile(r"^\s*(\(?\d{1,2}[.)]|\(?[a-hA-H][.)]|[-*•])\s+")
_LEAD_IN = re.compile(
    r"^(?:(?:and|also|again|then|next|finally|lastly|last|additionally|plus|so|secondly|thirdly|"
    r"firstly|first|second|third|fourth|to (?:start|begin)(?: with)?|for starters|"
    r"last but not least|on (?:a|another) (?:note|topic)|separately|besides|one more thing|"
    r"another (?:question|thing)|my (?:first|second|"
    r"third|next|last) (?:question|ask|request)|(?:question|ask|request|issue) (?:\w+|\d+)|"
    r"q\d+|\d+|[a-h])\s*[,:.)\-–]\s*)+", re.I)
_REQUEST = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would|will) you(?: please)?|please|i(?:'d| would) like "
    r"(?:to (?:know|understand|learn)|you to)|i need(?: to (?:know|understand))?|"
    r"we need(?: to (?:know|understand))?|i want to (?:know|understand)|help (?:me|us)|"
    r"tell (?:me|us)|explain|describe|clarify|confirm|advise|show (?:me|us)|list|recommend|"
    r"suggest|walk (?:me|us) through)\b", re.I)
# Requests about the exchange itself rather than about the product.
_ABOUT_THE_EXCHANGE = re.compile(
    r"\b(let (?:me|us) know|get back to (?:me|us)|reach (?:out to )?(?:me|us)|"
    r"contact (?:me|us)|call (?:me|us)|(?:schedule|have|set up|jump on) a call|"
    r"(?:we are|we're|i am|i'm) available|happy to (?:provide|share|send|help)|"
    r"(?:send|share|provide) (?:you )?(?:more |any )?(?:detail|details|logs|info|request ids?)|"
    r"thanks?|thank you)\b", re.I)
_LEANS_ON_BEFORE = re.compile(r"\b(it|its|they|them|their|this|that|these|those|there)\b", re.I)
_NAMES_ITSELF = re.compile(r"\b[A-Z][\w\-]*[A-Z0-9][\w\-]*\b|\b[A-Z][a-z]+ [A-Z][a-z]+\b")


@dataclass
class _Parts:
    noise: list[str]
    prose: list[list[str]]  # paragraphs of sentences


def read_ticket(text: str) -> TicketReading:
    """The asks, context and noise of ``text`` (see the module for the rules)."""
    parts = _split(text)
    asks: list[Ask] = []
    context: list[str] = []
    for paragraph in parts.prose:
        previous: str | None = None
        for sentence in paragraph:
            ask = _ask(sentence)
            if ask is None:
                context.append(sentence)
                previous = sentence
                continue
            if previous and _LEANS_ON_BEFORE.search(ask) and not _NAMES_ITSELF.search(ask):
                ask, reason = f"{previous} {ask}", "a question leaning on the sentence before"
            else:
                reason = "a question" if ask.endswith("?") else "a request"
            asks.append(Ask(text=ask, reason=reason))
            previous = None
    if not asks:
        whole = " ".join(" ".join(p) for p in parts.prose).strip() or text.strip()
        asks = [Ask(text=whole, reason="no question or request stood apart: the whole text")]
    return TicketReading(asks=_distinct(asks), context=" ".join(context), noise=parts.noise)


def _split(text: str) -> _Parts:
    """Noise lines and blocks out, the rest as paragraphs of sentences."""
    noise: list[str] = []
    paragraphs: list[list[str]] = [[]]
    lines = text.replace("\r\n", "\n").split("\n")
    fenced = False
    for number, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            noise.append(line)
            continue
        if fenced or line.startswith(("    ", "\t")) or _QUOTE_LINE.match(line) \
                or _LOG_LINE.match(line) or _setting(line):
            noise.append(line)
            continue
        if _SIGN_OFF.match(line):
            noise.extend(lines[number:])
            break
        if not line.strip():
            paragraphs.append([])
            continue
        if _GREETING.match(line) and not any(paragraphs):
            noise.append(line)
            continue
        paragraphs[-1].append(line.strip())
    prose = [_sentences(p) for p in paragraphs if p]
    return _Parts([n for n in noise if n.strip()], [p for p in prose if p])


def _sentences(lines: list[str]) -> list[str]:
    """One paragraph's sentences; each list item is its own, without its marker."""
    out: list[str] = []
    running: list[str] = []
    for line in [*lines, ""]:
        if not line or _LIST_MARK.match(line):
            out += sentences(" ".join(running))
            running = []
        if line and _LIST_MARK.match(line):
            out += sentences(_LIST_MARK.sub("", line))
        elif line:
            running.append(line)
    return out


def _setting(line: str) -> bool:
    """A ``key: value`` or ``key=value`` line of a pasted configuration (not prose with a
    colon: the key is one token and the line holds no sentence)."""
    return bool(_SETTING_LINE.match(line)) and len(line.split()) <= 6 and not line.rstrip() \
        .endswith("?")


def _ask(sentence: str) -> str | None:
    """The ask a sentence makes, without its lead-in; None for a statement."""
    text = _LEAD_IN.sub("", _LIST_MARK.sub("", sentence)).strip()
    if len(text.split()) < 3 or _ABOUT_THE_EXCHANGE.search(text):
        return None
    if text.endswith("?") or _REQUEST.match(text):
        return text[:1].upper() + text[1:]
    return None


def _distinct(asks: list[Ask]) -> list[Ask]:
    seen: set[str] = set()
    out = []
    for ask in asks:
        key = " ".join(ask.text.lower().split())
        if key not in seen:
            seen.add(key)
            out.append(ask)
    return out
