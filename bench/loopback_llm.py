"""A loopback OpenAI-compatible chat server that answers every request after exactly a fixed
delay, never one after another, and counts how many requests it holds at once.

Usage:  python bench/loopback_llm.py PORT [DELAY_MS=200]    (serves until killed)

Benches start it in its own process with :class:`LoopbackLLM`, so its CPU is not counted
against the stack or the bench driver. It is an asyncio server (uvicorn, a bare ASGI app): a
request sleeps ``delay_ms`` on the event loop and thousands can sleep at once.

- ``POST /v1/chat/completions`` answers a ragq role (the ``ragq role:`` line of its system
  prompt) with the rule answers of ``tests/fakes/openai_chat.py``, two of them fixed so every
  planned job has the same shape: the router (asked only with ``RAGQ_ROUTER=model``; by default
  ragq routes in process) calls every question procedural, and the planner answers one
  sub-query, the question itself. The sufficiency rule finds the evidence sufficient whenever
  chunks are shown. LlamaIndex's sub-question prompt gets one
  sub-question (the question, for the first tool listed); any other prompt (LlamaIndex's
  answer synthesis) gets a short text answer.
- ``GET /stats``: ``{"peak_in_flight", "in_flight", "requests", "by_kind", "delay_ms"}``; the
  kinds are ``ragq:<role>``, ``llamaindex:sub_questions`` and ``text``.
- ``POST /stats/reset`` zeroes the counters (between runs); ``POST /config`` with
  ``{"delay_ms": D}`` sets the delay of the requests that arrive from then on.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.openai_chat import ChatAnswer, completion, role_of, rule_answer, user_text

CHAT = "/v1/chat/completions"
SUB_QUESTIONS = "output a list of relevant sub-questions"
USER_QUESTION = re.compile(r"<User Question>\n(.*?)\n\n<Output>", re.DOTALL)
TOOLS = re.compile(r"<Tools>\n```json\n(\{.*?\})\n```", re.DOTALL)
QUERY = re.compile(r"^Query: (.*)$", re.MULTILINE)


def _text(message: dict[str, Any]) -> str:
    """A message's text, whether its content is a string or a list of content parts."""
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(str(part.get("text") or "") for part in content if isinstance(part, dict))
    return str(content)


def _ragq(role: str, body: dict[str, Any]) -> ChatAnswer:
    question = _subject(user_text(body))
    if role == "router":
        return ChatAnswer({"question_class": "procedural", "reason": "bench: one shape per job",
                           "confidence": 0.9})
    if role == "planner":
        return ChatAnswer({"sub_queries": [{"text": question, "depends_on": [],
                                            "reason": "bench: the question itself"}],
                           "strategy": "single", "reason": "bench planner"})
    return rule_answer(role, body)


def _subject(text: str) -> str:
    found = re.search(r"^(?:Question|Query): (.*)$", text, re.MULTILINE)
    return found.group(1).strip() if found else text.strip()[:200]


def _sub_questions(prompt: str) -> str:
    """One sub-question, the question itself, for the first tool: LlamaIndex's JSON markdown."""
    questions = USER_QUESTION.findall(prompt)
    tools = [json.loads(t) for t in TOOLS.findall(prompt)]
    tool = next(iter(tools[-1]), "tool") if tools else "tool"
    question = questions[-1].strip() if questions else prompt.strip()[-200:]
    items = {"items": [{"sub_question": question, "tool_name": tool}]}
    return f"```json\n{json.dumps(items, indent=4)}\n```"


def answer(body: dict[str, Any]) -> tuple[str, ChatAnswer]:
    """The kind of a chat request and its answer (see the module docstring)."""
    role = role_of({"messages": [{"content": _text(m)} for m in body.get("messages") or []]})
    if role != "unknown":
        return f"ragq:{role}", _ragq(role, body)
    prompt = "\n".join(_text(m) for m in body.get("messages") or [])
    if SUB_QUESTIONS in prompt:
        return "llamaindex:sub_questions", ChatAnswer(_sub_questions(prompt))
    queries = QUERY.findall(prompt)
    subject = queries[-1].strip() if queries else "the question"
    return "text", ChatAnswer(f"Fake answer to: {subject}")


class LoopbackApp:
    """The ASGI app: chat completions after ``delay_ms``, and the in-flight counters."""

    def __init__(self, delay_ms: float):
        self.delay_ms = delay_ms
        self.in_flight = self.peak = self.requests = 0
        self.by_kind: Counter[str] = Counter()

    def stats(self) -> dict[str, Any]:
        return {"peak_in_flight": self.peak, "in_flight": self.in_flight,
                "requests": self.requests, "by_kind": dict(self.by_kind),
                "delay_ms": self.delay_ms}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        method, path = scope["method"], scope["path"]
        if (method, path) == ("POST", CHAT):
            await self._chat(json.loads(body or b"{}"), send)
        elif (method, path) == ("GET", "/stats"):
            await _reply(send, 200, self.stats())
        elif (method, path) == ("POST", "/stats/reset"):
            self.peak, self.requests, self.by_kind = self.in_flight, 0, Counter()
            await _reply(send, 200, self.stats())
        elif (method, path) == ("POST", "/config"):
            self.delay_ms = float(json.loads(body)["delay_ms"])
            await _reply(send, 200, self.stats())
        else:
            await _reply(send, 404, {"error": {"message": f"no route {method} {path}",
                                               "type": "invalid_request_error", "code": None}})

    async def _chat(self, body: dict[str, Any], send: Any) -> None:
        self.in_flight += 1
        self.requests += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            kind, chat = answer(body)
            self.by_kind[kind] += 1
            reply = completion(body, chat, with_usage=True)[0]
            await asyncio.sleep(self.delay_ms / 1000)
            await _reply(send, 200, reply)
        finally:
            self.in_flight -= 1


async def _reply(send: Any, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})


def serve(port: int, delay_ms: float) -> None:
    """Serve on 127.0.0.1:``port`` until killed; a backlog of 4096 pending connections."""
    import uvicorn

    uvicorn.run(LoopbackApp(delay_ms), host="127.0.0.1", port=port, log_level="warning",
                backlog=4096, timeout_keep_alive=120, access_log=False, lifespan="off")


class LoopbackLLM:
    """The server in a child process: ``with LoopbackLLM(200) as llm: llm.v1_url``. The child
    is stopped (by its own pid) on exit."""

    def __init__(self, delay_ms: float, *, port: int | None = None):
        from ragq.workers.processes import free_port

        self.delay_ms = delay_ms
        self.port = port or free_port("127.0.0.1")
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.v1_url = f"{self.base_url}/v1"
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LoopbackLLM:
        self.process = subprocess.Popen([sys.executable, __file__, str(self.port),
                                         str(self.delay_ms)])
        deadline = time.monotonic() + 30
        while True:
            try:
                self.stats()
                return self
            except httpx.TransportError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError(f"the loopback LLM did not start on {self.port}") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def stats(self) -> dict[str, Any]:
        return httpx.get(f"{self.base_url}/stats", timeout=10).raise_for_status().json()

    def reset(self) -> dict[str, Any]:
        return httpx.post(f"{self.base_url}/stats/reset", timeout=10).raise_for_status().json()

    def set_delay(self, delay_ms: float) -> None:
        httpx.post(f"{self.base_url}/config", json={"delay_ms": delay_ms},
                   timeout=10).raise_for_status()
        self.delay_ms = delay_ms


if __name__ == "__main__":
    serve(int(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 200.0)
