"""Chat completions for the fake OpenAI server: rule-based answers per ragq role, scripted answers.

The role is read from the ``ragq role: <role>`` line that opens every ragq system prompt; the
inputs from the user message (``Question:``/``Query:`` lines and ``[chunk_id=… doc_id=…]``
evidence headers). The rules are deliberately simple and visible in a test's assertions:
the planner splits the question on " and ", the synthesizer cites the first two chunks, …
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

ROLE = re.compile(r"ragq role: (\w+)")
LINE = re.compile(r"^(Question|Query): (.*)$", re.MULTILINE)
CHUNK = re.compile(r"\[chunk_id=(\S+) doc_id=(\S+)\]")


@dataclass
class ChatAnswer:
    """A scripted completion: ``content`` (a dict is JSON-encoded; None for a refusal),
    ``finish_reason``, ``refusal``, and ``delay_s`` before the server answers."""

    content: Any = None
    finish_reason: str = "stop"
    refusal: str | None = None
    delay_s: float = 0.0

    def text(self) -> str | None:
        if self.content is None or isinstance(self.content, str):
            return self.content
        return json.dumps(self.content)


def role_of(body: dict[str, Any]) -> str:
    """The ragq role a chat request plays (``unknown`` when it names none)."""
    for message in body.get("messages") or []:
        found = ROLE.search(str(message.get("content") or ""))
        if found:
            return found.group(1)
    return "unknown"


def user_text(body: dict[str, Any]) -> str:
    """The first user message (the role's inputs; later turns are repairs)."""
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    return str(users[0].get("content") or "") if users else ""


def word_count(body: dict[str, Any]) -> int:
    """The fake's prompt-token count: whitespace words of every message."""
    return sum(len(str(m.get("content") or "").split()) for m in body.get("messages") or [])


def _subject(text: str) -> str:
    found = LINE.search(text)
    return found.group(2).strip() if found else ""


def _chunks(text: str) -> list[tuple[str, str]]:
    return CHUNK.findall(text)


def _router(text: str) -> dict[str, Any]:
    multi = " and " in _subject(text)
    return {"question_class": "multi_hop" if multi else "simple_fact",
            "reason": "fake: ' and ' splits it" if multi else "fake: one fact", "confidence": 0.8}


def _planner(text: str) -> dict[str, Any]:
    parts = [p.strip(" ?") for p in _subject(text).split(" and ") if p.strip(" ?")]
    subs = [{"text": f"{p}?", "depends_on": [], "reason": "fake: split on ' and '"}
            for p in parts]
    return {"sub_queries": subs, "strategy": "aggregate" if len(subs) > 1 else "single",
            "reason": "fake planner"}


def _sufficiency(text: str) -> dict[str, Any]:
    """The merged check: the verdict, the finding and, when nothing was found, a rewrite."""
    found = bool(_chunks(text))
    finding = _finder(text)
    return {"sufficient": found, "score": 0.9 if found else 0.0,
            "missing_terms": [] if found else ["everything"], "reason": "fake sufficiency",
            "finding": {k: finding[k] for k in ("text", "doc_ids", "alternatives")},
            "rewrite": "" if found else _rewriter(text)["text"]}


def _rewriter(text: str) -> dict[str, Any]:
    return {"text": f"{_subject(text)} explained", "reason": "fake rewrite"}


def _finder(text: str) -> dict[str, Any]:
    chunks = _chunks(text)
    if not chunks:
        return {"text": "", "doc_ids": [], "reason": "fake: no evidence", "alternatives": []}
    return {"text": f"fact from {chunks[0][1]}", "doc_ids": [chunks[0][1]],
            "reason": "fake finder", "alternatives": [f"fact from {c[1]}" for c in chunks[1:3]]}


def _verifier(text: str) -> dict[str, Any]:
    found = bool(_chunks(text))
    return {"sufficient": found, "confidence": 0.9 if found else 0.1, "missing_info": [],
            "follow_up_queries": [], "reason": "fake verifier"}


def _synthesizer(text: str) -> dict[str, Any]:
    if text.startswith("Asks:"):
        return _ticket_synthesizer(text)
    cited = [{"chunk_id": c, "quote": ""} for c, _ in _chunks(text)[:2]]
    return {"answer": f"Fake answer to: {_subject(text)}", "citations": cited,
            "contradictions": [], "insufficient": not cited}


def _ticket_synthesizer(text: str) -> dict[str, Any]:
    """One answer per listed ask, each citing the first context chunk (or none)."""
    asks = re.findall(r"^(\d+)\. (.+)$", text.split("\n\nContext:")[0], re.M)
    chunks = _chunks(text)
    return {"answers": [{"index": int(i), "answer": f"Fake answer to: {a}",
                         "citations": [{"chunk_id": chunks[0][0], "quote": ""}] if chunks else [],
                         "insufficient": not chunks} for i, a in asks],
            "contradictions": []}


def _ticket_reader(text: str) -> dict[str, Any]:
    """Every line that ends with a question mark is an ask; the rest is context."""
    lines = [x.strip() for x in text.removeprefix("Ticket:").splitlines() if x.strip()]
    asks = [{"text": x, "reason": "fake: a question mark"} for x in lines if x.endswith("?")]
    return {"asks": asks or [{"text": " ".join(lines), "reason": "fake: the whole ticket"}],
            "context": " ".join(x for x in lines if not x.endswith("?")), "noise": []}


SOURCE_LINE = re.compile(r"^- name=(\S+) past_hits=\d+: (.*)$", re.M)


def _source_router(text: str) -> dict[str, Any]:
    """The listed source whose description shares the most words with the query."""
    query = {w for w in re.findall(r"\w+", _subject(text).lower()) if len(w) > 3}
    fits = {name: len(query & set(re.findall(r"\w+", desc.lower())))
            for name, desc in SOURCE_LINE.findall(text)}
    best = max(fits, key=lambda n: fits[n]) if fits else "none"
    return {"sources": [best], "scores": [{"name": n, "score": min(1.0, f / 3)}
                                          for n, f in fits.items()],
            "reason": "fake: most shared words"}


def _reranker(text: str) -> dict[str, Any]:
    """The candidates in the order given."""
    return {"ranked": [c for c, _ in _chunks(text)], "reason": "fake: as given"}


RULES = {"reranker": _reranker, "ticket_reader": _ticket_reader, "router": _router,
         "planner": _planner, "sufficiency": _sufficiency, "rewriter": _rewriter, "finder": _finder,
         "verifier": _verifier, "synthesizer": _synthesizer, "source_router": _source_router}


def rule_answer(role: str, body: dict[str, Any]) -> ChatAnswer:
    """The rule-based answer of ``role`` to this request; unknown roles get ``{}``."""
    rule = RULES.get(role)
    return ChatAnswer(rule(user_text(body)) if rule else {})


def completion(body: dict[str, Any], answer: ChatAnswer, *, with_usage: bool
               ) -> tuple[dict[str, Any], int, int]:
    """The chat.completion body for ``answer``, and the prompt and completion tokens it
    reports (words, see :func:`word_count`)."""
    content = answer.text()
    prompt, output = word_count(body), len((content or answer.refusal or "").split())
    message = {"role": "assistant", "content": content, "refusal": answer.refusal}
    reply: dict[str, Any] = {
        "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": answer.finish_reason,
                     "logprobs": None}],
    }
    if with_usage:
        reply["usage"] = {"prompt_tokens": prompt, "completion_tokens": output,
                          "total_tokens": prompt + output}
    return reply, prompt, output
