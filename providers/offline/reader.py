"""Reading a support ticket into its asks, its context and its noise, by the text's form alone.

A ticket is an e-mail: a greeting, background, questions and requests (in prose, numbered or
lettered, one per line or several per paragraph), pasted logs and configuration, a sign-off
and a signature. The rules read that structure, never a particular wording:

- **noise** — fenced and indented blocks, quoted lines (``>``), lines shaped like log records
  or ``key: value`` / ``key=value`` settings, the greeting line, and everything from a sign-off
  (``Thanks``, ``Best``, ``Cheers``, ``Regards`` …, or a ``--`` separator) to the end;
- **asks** — sentences that end with a question mark, requests in the imperative or the
  polite forms ("please explain …", "can you tell me …", "I need to know …"), and needs stated
  in any person ("you want a card without annual fees", "she is looking for a loan", "the
  customer demands a refund", "I will not accept …") or as a problem ("my card was declined",
  "we are unable to log in"), with their lead-in ("First,", "Question two:", "1.", "b)",
  "Also,") dropped; a question or request about the exchange itself ("let us know if …", "can
  you call us?", what the agent asks for) is not an ask. A question that leans on the
  sentence before it ("… It fails at night. Why does it?") carries that sentence along;
- **context** — the other sentences: who writes, what they run, what they tried.

Asks are needs, not sentences: near-duplicates (the same plea reworded) merge into one
(:func:`ragq.orchestration.asks.merge_asks`), and an ask that points at a thing without naming
it ("the card", "this plan") carries the name the ticket gives it elsewhere.

A text with no ask found is one ask: its own text without the noise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ragq.orchestration.asks import Vectors, merge_asks
from ragq.orchestration.text import content_words, stem
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
# A form's field: a key of words, then a value of at least two words ("Issue: card declined").
_FORM_FIELD = re.compile(r"^\s*[A-Za-z][A-Za-z ]{0,30}:\s*[A-Za-z$][^\s:=]*(?:\s+\S+)+\s*$")
# A turn of the other party in a pasted conversation: what they say is context, never an ask.
_OTHER_TURN = re.compile(r"^\s*\**(?:agent|representative|support|assistant|rep|operator|bot|"
                         r"advisor|staff)\b[^:\n]{0,20}:\**", re.I)
# A turn label of the one who asks, dropped from the text.
_OWN_LABEL = re.compile(r"^\s*\**(?:customer|user|client|me|caller)\b[^:\n]{0,20}:\**\s*",
                        re.I)
# A field whose value is an ask by the field's name, whatever its form ("Request: refund …").
_ASK_LABEL = re.compile(r"^\s*\**(?:request|question|issue|problem|need|goal|ask|"
                        r"requirement)s?\b[^:\n]{0,20}:\**\s*", re.I)
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
# A need stated as a fact in any person: wanting, seeking, requiring, refusing, or a problem.
_NEED = re.compile(
    r"\b(?:wants?|wanted|wanting|needs?|needed|needing|looking for|looks for|seek(?:s|ing)?|"
    r"would like|'d like|wish(?:es)? to|hop(?:e|es|ing) to|interested in|trying to|tries to|"
    r"plans? to|planning to|requests?|requesting|demands?|demanding|inquir(?:e|es|ing)|"
    r"wonder(?:s|ing)?|find out|require[sd]?|requiring|must (?:have|be|get)|"
    r"(?:will|would) not accept|won't accept|(?:can ?not|can't|unable to) "
    r"(?:find|access|log|sign|use|get|see|pay|open|make|close|transfer|withdraw|order)|"
    r"declined|rejected|failed|fails|not working|doesn't work|stopped working|disputes?|"
    r"disputing|charged twice|overcharged|locked out|was charged)\b", re.I)
# Whose need: what the agent or representative does ("if the agent asks for …") is the
# exchange, not a need of the customer's.
_OTHER_PARTY = re.compile(r"\b(?:agent|representative|assistant|rep|operator|they)\b"
                          r"(?:\W+\w+){0,3}\W*$", re.I)
STATED_NEED = "a need stated as a fact"
_ENTITY = re.compile(r"\b(?:[A-Z][\w\-+]*[ \t]){1,4}[A-Z][\w\-+]*\b|"
                     r"\b[A-Z]?[a-z]+[A-Z][\w]*\b|"
                     r"\b(?=[\w\-]*\d)(?=[\w\-]*[A-Za-z])[A-Za-z][\w]*[-_][\w\-]+\b")
_NAMING_FIELD = re.compile(r"^\s*(?:product|plan|card|account(?: type)?|service|model|tier|"
                           r"subscription|package|sku|error(?: code)?)\s*:\s*([^\n]{2,60})$",
                           re.I | re.M)
# Capitalised words that open sentences or address someone, not names of things.
_NOT_NAMES = frozenset({"you", "your", "i", "we", "if", "when", "the", "this", "that", "hi",
                        "hello", "dear", "please", "thanks", "then", "after", "only", "do",
                        "don't", "never", "start", "say", "once", "mention"})
_LEANS_ON_BEFORE = re.compile(r"\b(it|its|they|them|their|this|that|these|those|there)\b", re.I)
_NAMES_ITSELF = re.compile(r"\b[A-Z][\w\-]*[A-Z0-9][\w\-]*\b|\b[A-Z][a-z]+ [A-Z][a-z]+\b")


@dataclass
class _Parts:
    noise: list[str]
    prose: list[list[str]]  # paragraphs of sentences
    other: list[str]  # what the other party of a pasted conversation said
    labelled: list[str]  # values of fields that ask by their name ("Request: …")


def read_ticket(text: str, vectors: Callable[[list[str]], Vectors] | None = None
                ) -> TicketReading:
    """The asks, context and noise of ``text`` (see the module for the rules); ``vectors``
    (an embedder's unit vectors of texts, optional) lets reworded asks merge by meaning."""
    parts = _split(text)
    asks: list[Ask] = []
    context: list[str] = []
    adjacent = False  # the last sentence read (past any noise) was an ask
    for paragraph in parts.prose:
        previous: str | None = None
        for sentence in paragraph:
            ask = _ask(sentence)
            if ask is None:
                context.append(sentence)
                previous, adjacent = sentence, False
                continue
            if previous and _LEANS_ON_BEFORE.search(ask) and not _NAMES_ITSELF.search(ask):
                ask, reason = f"{previous} {ask}", "a question leaning on the sentence before"
            elif ask.endswith("?"):
                reason = "a question"
            else:
                reason = "a request" if _REQUEST.match(ask) else STATED_NEED
            if adjacent and reason != STATED_NEED and asks[-1].reason == STATED_NEED:
                # "Our export fails every night: [log] How do we stop E-4410?" is one need.
                ask = f"{asks.pop().text} {ask}"
            asks.append(Ask(text=ask, reason=reason))
            previous, adjacent = None, True
    asks += [Ask(text=x[:1].upper() + x[1:], reason="a field that asks") for x in parts.labelled]
    if not asks:
        whole = " ".join(" ".join(p) for p in parts.prose).strip() or text.strip()
        asks = [Ask(text=whole, reason="no question or request stood apart: the whole text")]
    context += parts.other
    named = ticket_entities(text)
    asks = [_with_entities(a, named) for a in _with_statements_attached(_distinct(asks))]
    merged = merge_asks(asks, max_asks=len(asks),
                        vectors=vectors([a.text for a in asks]) if vectors else None)
    return TicketReading(asks=merged, context=" ".join(context), noise=parts.noise)


def _with_statements_attached(asks: list[Ask]) -> list[Ask]:
    """A need stated as a fact ("our nightly sync fails") that a question or request of the
    ticket is about (they share a content word) is that ask's background, not an ask of its
    own: it joins the ask, in the ticket's order. Statements no explicit ask is about stay
    asks (a persona brief states every need that way)."""
    explicit = [i for i, a in enumerate(asks) if a.reason != STATED_NEED]
    out: dict[int, list[int]] = {i: [i] for i in range(len(asks))}
    for i, ask in enumerate(asks):
        if ask.reason != STATED_NEED:
            continue
        mine = {stem(w) for w in content_words(ask.text)}
        about = next((j for j in explicit
                      if mine & {stem(w) for w in content_words(asks[j].text)}), None)
        if about is not None:
            out[about].append(i)
            del out[i]
    return [Ask(text=" ".join(asks[k].text for k in sorted(members)), reason=asks[i].reason)
            if len(members) > 1 else asks[i] for i, members in out.items()]


def ticket_entities(text: str) -> list[str]:
    """The things ``text`` names, in order of first mention: capitalised names of two words or
    more ("Gold Rewards Card"), codes mixing letters and digits ("E-4410", "ERR_TIMEOUT_42"),
    and the values of a form's naming fields ("Product: EcoCard")."""
    found = [m.group(0).strip() for m in _ENTITY.finditer(text)]
    found += [m.group(1).strip() for m in _NAMING_FIELD.finditer(text)]
    return list(dict.fromkeys(f for f in found if f.split()[0].lower() not in _NOT_NAMES))


def _with_entities(ask: Ask, entities: list[str]) -> Ask:
    """``ask`` carrying the names of the things it points at without naming them: a thing it
    calls by its kind ("the card", "my account": the last word of one of ``entities``, the
    names the ticket gives, "Gold Rewards Card") is named after the ask, in parentheses; an
    ask that names it already is kept."""
    mine = {stem(w) for w in content_words(ask.text)}
    named = []
    for entity in entities:
        parts = [stem(w) for w in content_words(entity)]
        if parts and parts[-1] in mine and not set(parts) <= mine:
            named.append(entity)
    if not named:
        return ask
    return ask.model_copy(update={"text": f"{ask.text} ({', '.join(named[:3])})"})


def _split(text: str) -> _Parts:
    """Noise lines and blocks out, the rest as paragraphs of sentences."""
    noise: list[str] = []
    other: list[str] = []
    labelled: list[str] = []
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
        if _OTHER_TURN.match(line):
            other.append(_OTHER_TURN.sub("", line).strip())
            paragraphs.append([])
            continue
        if _ASK_LABEL.match(line):
            labelled.append(_ASK_LABEL.sub("", line).strip())
            continue
        line = _OWN_LABEL.sub("", line)
        if _FORM_FIELD.match(line):  # a field is a sentence of its own, even unpunctuated
            paragraphs += [[line.strip()], []]
            continue
        paragraphs[-1].append(line.strip())
    prose = [_sentences(p) for p in paragraphs if p]
    return _Parts([n for n in noise if n.strip()], [p for p in prose if p], other,
                  [x for x in labelled if x])


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
    colon: the key is one token and the line holds no sentence; not a form's field either,
    whose value is words: "Issue: card declined at checkout")."""
    return bool(_SETTING_LINE.match(line)) and len(line.split()) <= 6 and not line.rstrip() \
        .endswith("?") and not _FORM_FIELD.match(line)


def _ask(sentence: str) -> str | None:
    """The ask a sentence makes, without its lead-in; None for a statement."""
    text = _LEAD_IN.sub("", _LIST_MARK.sub("", sentence)).strip()
    if len(text.split()) < 3 or _ABOUT_THE_EXCHANGE.search(text):
        return None
    if text.endswith("?") or _REQUEST.match(text) or _states_need(text):
        return text[:1].upper() + text[1:]
    return None


def _states_need(text: str) -> bool:
    """Whether ``text`` states a need of the one who writes or is described (not the other
    party's: see :data:`_OTHER_PARTY`)."""
    return any(not _OTHER_PARTY.search(text[:m.start()]) for m in _NEED.finditer(text))


def _distinct(asks: list[Ask]) -> list[Ask]:
    seen: set[str] = set()
    out = []
    for ask in asks:
        key = " ".join(ask.text.lower().split())
        if key not in seen:
            seen.add(key)
            out.append(ask)
    return out
