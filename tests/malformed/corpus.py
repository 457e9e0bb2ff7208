"""The malformed-input corpus: inputs people (and attackers) send, grouped by family.

Every case says what a correct front door does with it. Line cases are one bad JSONL line (as
bytes, exactly as sent); they are framed between two good tickets, so a case also checks that
no good line is lost. Request cases are whole requests to the HTTP API.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


def jl(value: Any) -> bytes:
    """One JSONL line of ``value`` (ensure_ascii keeps escapes such as ``\\udfff`` as sent)."""
    return json.dumps(value).encode()


def ticket(**fields: Any) -> bytes:
    return jl({"custom_id": "bad", "question": "What is the refund policy?", **fields})


DEEP = b'{"custom_id": "deep", "question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
DEEP_META = (b'{"custom_id": "deepm", "question": "q?", "metadata": ' + b'{"a":' * 5000 + b"1"
             + b"}" * 5000 + b"}")


@dataclass(frozen=True)
class LineCase:
    """One bad line: the error ``code`` its errors-file entry must carry."""

    family: str
    name: str
    line: bytes
    code: str


def _line_cases() -> list[LineCase]:
    cases: list[tuple[str, str, bytes, str]] = []
    add = cases.append
    # JSON syntax
    for name, raw in [("unclosed", b'{"custom_id": "x"'), ("trailing-comma", b'{"a": 1,}'),
                      ("single-quotes", b"{'custom_id': 'x'}"), ("bare-word", b"hello"),
                      ("two-objects", b'{"a":1}{"b":2}'), ("comment", b'// {"a": 1}'),
                      ("unterminated-string", b'{"question": "abc'),
                      ("bad-escape", b'{"question": "\\x41"}'), ("nul-byte", b'{"a":\x00 1}'),
                      ("control-char-in-string", b'{"custom_id":"x","question":"a\x01b"}'),
                      ("lone-brace", b"}"), ("leading-comma", b",{}"),
                      ("python-none", b'{"custom_id": None}'), ("hex-number", b'{"n": 0x10}'),
                      ("plus-number", b'{"n": +1}'), ("truncated-unicode-escape",
                                                         b'{"question": "\\u12"}')]:
        add(("json-syntax", name, raw, "invalid_json"))
    # Things Python's json accepts that are not JSON, or that would overflow it
    for name, raw in [("nan", b'{"custom_id":"n","question":"q?","metadata":{"x":NaN}}'),
                      ("infinity", b'{"custom_id":"n","question":"q?","metadata":{"x":Infinity}}'),
                      ("minus-infinity", b'{"custom_id":"n","question":-Infinity}'),
                      ("nan-budget", b'{"custom_id":"n","question":"q?","budget":'
                                     b'{"max_cost_usd":NaN}}'),
                      ("deep-question", DEEP), ("deep-array", b"[" * 50_000 + b"]" * 50_000),
                      ("deep-object", b'{"a":' * 50_000 + b"1" + b"}" * 50_000),
                      ("huge-int", b'{"custom_id":"h","question":"q?","budget":{"max_steps":'
                                   + b"9" * 5000 + b"}}")]:
        add(("json-extensions-and-depth", name, raw, "invalid_json"))
    add(("json-extensions-and-depth", "deep-metadata", DEEP_META, "invalid_json"))
    add(("json-extensions-and-depth", "nested-metadata-100", b'{"custom_id":"n","question":"q?",'
         b'"metadata":' + b'{"a":' * 100 + b"1" + b"}" * 100 + b"}", "invalid_ticket"))
    # Encodings
    for name, raw in [("latin1", b'{"custom_id":"l","question":"caf\xe9?"}'),
                      ("truncated-utf8", b'{"custom_id":"t","question":"\xe2\x82"}'),
                      ("overlong-utf8", b'{"custom_id":"o","question":"\xc0\xaf"}'),
                      ("utf8-surrogate-bytes", b'{"custom_id":"s","question":"\xed\xbf\xbf"}'),
                      ("invalid-start-byte", b"\xff\xfe{}"), ("cp1252-quote",
                                                              b'{"question":"\x93hi\x94"}'),
                      ]:
        add(("encoding", name, raw, "invalid_utf8"))
    for name, raw in [("bom-not-on-line-1", b'\xef\xbb\xbf{"custom_id":"b","question":"q?"}'),
                      ("utf16le", '{"custom_id":"u","question":"q"}'.encode("utf-16-le"))]:
        add(("encoding", name, raw, "invalid_json"))  # valid UTF-8, not JSON
    # Lone surrogates written as JSON escapes (valid JSON, invalid Unicode)
    for name, raw in [("question", b'{"custom_id":"s1","question":"\\udfff"}'),
                      ("question-high", b'{"custom_id":"s2","question":"hi \\ud800 there"}'),
                      ("custom-id", b'{"custom_id":"\\udfff","question":"q?"}'),
                      ("acl-label", b'{"custom_id":"s3","question":"q?","acl":["\\udc00"]}'),
                      ("metadata-value", b'{"custom_id":"s4","question":"q?",'
                                         b'"metadata":{"k":"\\udfff"}}'),
                      ("metadata-key", b'{"custom_id":"s5","question":"q?",'
                                       b'"metadata":{"\\udfff":1}}'),
                      ("webhook", b'{"custom_id":"s6","question":"q?",'
                                  b'"webhook_url":"https://x.example/\\udfff"}'),
                      ("route", b'{"custom_id":"s7","question":"q?","route":"\\ud83d"}')]:
        add(("lone-surrogate", name, raw, "invalid_ticket"))
    for name, raw in [("question", b'{"custom_id":"z1","question":"a\\u0000b?"}'),
                      ("custom-id", b'{"custom_id":"z\\u0000","question":"q?"}'),
                      ("metadata-key", b'{"custom_id":"z2","question":"q?",'
                                       b'"metadata":{"k\\u0000":1}}')]:
        add(("nul-escape", name, raw, "invalid_ticket"))
    # Not a JSON object
    for name, value in [("array", [1, 2]), ("string", "What?"), ("number", 42), ("null", None),
                        ("true", True), ("empty-array", [])]:
        add(("not-an-object", name, jl(value), "invalid_ticket"))
    # Missing, blank or mistyped fields
    for name, value in [
        ("empty-object", {}), ("no-question", {"custom_id": "x"}),
        ("no-custom-id", {"question": "q?"}), ("blank-question", {"custom_id": "x",
                                                                  "question": "   "}),
        ("empty-question", {"custom_id": "x", "question": ""}),
        ("question-number", {"custom_id": "x", "question": 5}),
        ("question-list", {"custom_id": "x", "question": ["a"]}),
        ("question-null", {"custom_id": "x", "question": None}),
        ("question-object", {"custom_id": "x", "question": {"text": "q"}}),
        ("custom-id-number", {"custom_id": 7, "question": "q?"}),
        ("custom-id-empty", {"custom_id": "", "question": "q?"}),
        ("custom-id-too-long", {"custom_id": "c" * 600, "question": "q?"}),
        ("custom-id-list", {"custom_id": ["a"], "question": "q?"}),
        ("unknown-field", {"custom_id": "x", "question": "q?", "priority": "high"}),
        ("acl-string", {"custom_id": "x", "question": "q?", "acl": "public"}),
        ("acl-empty", {"custom_id": "x", "question": "q?", "acl": []}),
        ("acl-blank-label", {"custom_id": "x", "question": "q?", "acl": ["  "]}),
        ("acl-number", {"custom_id": "x", "question": "q?", "acl": [1]}),
        ("route-unknown", {"custom_id": "x", "question": "q?", "route": "teleport"}),
        ("route-number", {"custom_id": "x", "question": "q?", "route": 3}),
        ("metadata-list", {"custom_id": "x", "question": "q?", "metadata": [1]}),
        ("webhook-number", {"custom_id": "x", "question": "q?", "webhook_url": 5}),
        ("webhook-too-long", {"custom_id": "x", "question": "q?",
                              "webhook_url": "https://e.example/" + "a" * 3000}),
        ("gold-doc-ids-string", {"custom_id": "x", "question": "q?", "gold_doc_ids": "d1"}),
    ]:
        add(("fields", name, jl(value), "invalid_ticket"))
    # Budgets: type confusion, ranges, unknown keys
    for name, budget in [
        ("steps-true", {"max_steps": True}), ("steps-false", {"max_steps": False}),
        ("steps-string", {"max_steps": "20"}), ("steps-float", {"max_steps": 2.5}),
        ("steps-float-whole", {"max_steps": 20.0}), ("steps-zero", {"max_steps": 0}),
        ("steps-negative", {"max_steps": -1}), ("steps-huge", {"max_steps": 10**12}),
        ("steps-null-list", {"max_steps": [1]}), ("cost-string", {"max_cost_usd": "1"}),
        ("cost-true", {"max_cost_usd": True}), ("cost-negative", {"max_cost_usd": -0.5}),
        ("cost-huge", {"max_cost_usd": 1e308}), ("latency-zero", {"max_latency_ms": 0}),
        ("tokens-object", {"max_llm_tokens": {"n": 1}}), ("unknown-key", {"max_stepz": 3}),
        ("budget-list", [1, 2]), ("budget-string", "cheap"), ("budget-number", 5),
    ]:
        add(("budget", name, ticket(budget=budget), "invalid_ticket"))
    # Per-ticket limits and duplicates fail alone
    add(("per-ticket-limits", "question-over-limit",
         jl({"custom_id": "long", "question": "x" * 20_001}), "question_too_long"))
    add(("per-ticket-limits", "question-far-over-limit",
         jl({"custom_id": "long2", "question": "word " * 60_000}), "question_too_long"))
    add(("per-ticket-limits", "duplicate-custom-id",
         jl({"custom_id": "good-1", "question": "again?"}), "duplicate_custom_id"))
    # Webhook URLs a ticket may not use
    for name, url in [("ftp", "ftp://example.com/x"), ("loopback", "http://127.0.0.1:9/x"),
                      ("private", "http://10.0.0.8/x"), ("shared", "http://100.64.1.2/x"),
                      ("link-local", "http://169.254.169.254/latest"),
                      ("mapped", "http://[::ffff:192.168.0.1]/x"), ("no-host", "http:///x"),
                      ("bad-port", "http://example.com:70000/x")]:
        add(("webhook-url", name, ticket(webhook_url=url), "invalid_webhook_url"))
    return [LineCase(*c) for c in cases]


LINE_CASES = _line_cases()
GOOD_FIRST = jl({"custom_id": "good-1", "question": "How do I reset my password?"})
GOOD_LAST = jl({"custom_id": "good-2", "question": "Where is my invoice?"})


def framed(case: LineCase) -> bytes:
    """The bad line between two good tickets: line 2 of three."""
    return GOOD_FIRST + b"\n" + case.line + b"\n" + GOOD_LAST + b"\n"


@dataclass(frozen=True)
class EncodingCase:
    """A whole upload whose every ticket is good, in an encoding or layout variant."""

    name: str
    body: bytes
    custom_ids: tuple[str, ...] = ("good-1", "good-2")


ENCODING_CASES = [
    EncodingCase("bom", b"\xef\xbb\xbf" + GOOD_FIRST + b"\n" + GOOD_LAST + b"\n"),
    EncodingCase("bom-crlf", b"\xef\xbb\xbf" + GOOD_FIRST + b"\r\n" + GOOD_LAST + b"\r\n"),
    EncodingCase("crlf", GOOD_FIRST + b"\r\n" + GOOD_LAST + b"\r\n"),
    EncodingCase("no-final-newline", GOOD_FIRST + b"\n" + GOOD_LAST),
    EncodingCase("blank-lines", b"\n\n" + GOOD_FIRST + b"\n   \n\t\n" + GOOD_LAST + b"\n\n"),
    EncodingCase("non-ascii", jl({"custom_id": "é-1", "question": "¿Dónde está mi factura? 請"})
                 + b"\n" + json.dumps({"custom_id": "e-2", "question": "emoji 🚀 ok?"},
                                      ensure_ascii=False).encode() + b"\n",
                 ("é-1", "e-2")),
    EncodingCase("long-ticket-with-logs", jl({
        "custom_id": "log-1", "question": "Sync fails after upgrade. Log:\n"
        + "2026-01-01 ERROR sync worker=3 code=E42 retry=5\n" * 150}) + b"\n" + GOOD_LAST,
                 ("log-1", "good-2")),
]

BAD_COLLECTIONS = ["../x", "a/b", "a\\b", "c" * 300, "bad\x00name", ".hidden", "-dash",
                   "trailing.", "with space", "ünïcode", "a" * 65, "..", "x?y", "\udfff"]
"""Collection names that must be refused where a collection is named (the empty name means
"the default" on every front door, so it is not here)."""


@dataclass(frozen=True)
class RequestCase:
    """A whole request and the 4xx it must get (``status``), in the error shape."""

    family: str
    name: str
    method: str
    path: str
    status: int
    body: bytes | None = None
    content_type: str | None = "application/json"
    auth: bool = True
    headers: dict[str, str] = field(default_factory=dict)


def _job(body: Any) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body).encode()


def _request_cases() -> list[RequestCase]:
    out: list[RequestCase] = []
    good = {"question": "How do I reset my password?"}
    jobs = [
        ("lone-surrogate-question", b'{"question": "\\udfff"}', 422),
        ("lone-surrogate-custom-id", b'{"question": "q?", "custom_id": "\\ud800"}', 422),
        ("lone-surrogate-metadata", b'{"question": "q?", "metadata": {"\\udfff": "x"}}', 422),
        ("lone-surrogate-collection", b'{"question": "q?", "collection": "\\udfff"}', 422),
        ("nan-budget", b'{"question": "q?", "budget": {"max_cost_usd": NaN}}', 422),
        ("infinity-budget", b'{"question": "q?", "budget": {"max_cost_usd": Infinity}}', 422),
        ("nan-metadata", b'{"question": "q?", "metadata": {"x": NaN}}', 422),
        ("steps-true", {**good, "budget": {"max_steps": True}}, 422),
        ("steps-string", {**good, "budget": {"max_steps": "5"}}, 422),
        ("steps-float", {**good, "budget": {"max_steps": 1.5}}, 422),
        ("budget-unknown-key", {**good, "budget": {"max_stepz": 5}}, 422),
        ("budget-not-object", {**good, "budget": 5}, 422),
        ("no-question", {"custom_id": "x"}, 422),
        ("blank-question", {"question": "   "}, 422),
        ("question-number", {"question": 12}, 422),
        ("question-null", {"question": None}, 422),
        ("question-too-long", {"question": "x" * 20_001}, 422),
        ("unknown-field", {**good, "priority": 1}, 422),
        ("acl-empty", {**good, "acl": []}, 422),
        ("acl-string", {**good, "acl": "public"}, 422),
        ("acl-blank", {**good, "acl": [" "]}, 422),
        ("acl-outside-key", {**good, "acl": ["staff"]}, 422),
        ("route-unknown", {**good, "route": "warp"}, 422),
        ("custom-id-too-long", {**good, "custom_id": "c" * 513}, 422),
        ("webhook-private", {**good, "webhook_url": "http://10.1.1.1/h"}, 422),
        ("webhook-shared", {**good, "webhook_url": "http://100.64.0.9/h"}, 422),
        ("webhook-loopback", {**good, "webhook_url": "http://127.0.0.1:9/h"}, 422),
        ("webhook-scheme", {**good, "webhook_url": "file:///etc/passwd"}, 422),
        ("body-array", [good], 422), ("body-string", "question", 422),
        ("body-null", None, 422), ("body-empty", b"", 422),
        ("body-not-json", b"question=hi", 422), ("body-truncated", b'{"question": "hi', 422),
        ("body-deep", b'{"question": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400),
        ("nul-question", b'{"question": "a\\u0000b"}', 422),
        ("nul-custom-id", b'{"question": "q?", "custom_id": "\\u0000"}', 422),
        ("body-invalid-utf8", b'{"question": "caf\xe9"}', 400),
        ("body-huge-int", b'{"question": "q?", "budget": {"max_steps": ' + b"9" * 5000
         + b"}}", 400),
    ]
    for name, body, status in jobs:
        out.append(RequestCase("jobs-body", name, "POST", "/v1/jobs", status, _job(body)))
    for name in BAD_COLLECTIONS:
        body = json.dumps({**good, "collection": name}).encode()
        out.append(RequestCase("collection-name", f"job-{name[:20]!r}", "POST", "/v1/jobs", 422,
                               body))
        out.append(RequestCase("collection-name", f"batch-json-{name[:20]!r}", "POST",
                               "/v1/batches", 422,
                               json.dumps({"tickets": [{"custom_id": "a", "question": "q?"}],
                                           "collection": name}).encode()))
    for name in ["../x", "a/b", "c" * 300, "bad%00name", ".hidden", "with%20space"]:
        out.append(RequestCase("collection-name", f"batch-jsonl-{name[:20]!r}", "POST",
                               f"/v1/batches?collection={name}", 422, GOOD_FIRST + b"\n",
                               "application/jsonl"))
    batch_json = [
        ("no-tickets", {}, 422), ("tickets-not-list", {"tickets": "x"}, 422),
        ("tickets-empty", {"tickets": []}, 422),
        ("ticket-not-object", {"tickets": [1]}, 422),
        ("unknown-field", {"tickets": [{"custom_id": "a", "question": "q?"}], "x": 1}, 422),
        ("budget-true", {"tickets": [{"custom_id": "a", "question": "q?"}],
                         "budget": {"max_steps": True}}, 422),
        ("budget-nan", b'{"tickets": [{"custom_id": "a", "question": "q?"}], '
                       b'"budget": {"max_cost_usd": NaN}}', 422),
        ("metadata-surrogate", b'{"tickets": [{"custom_id": "a", "question": "q?"}], '
                               b'"metadata": {"k": "\\udfff"}}', 422),
        ("webhook-private", {"tickets": [{"custom_id": "a", "question": "q?"}],
                             "webhook_url": "http://192.168.1.1/h"}, 422),
        ("webhook-shared", {"tickets": [{"custom_id": "a", "question": "q?"}],
                            "webhook_url": "http://100.100.100.100/h"}, 422),
        ("not-json", b"{tickets", 422), ("deep", b'{"tickets": ' + b"[" * 100_000
                                         + b"]" * 100_000 + b"}", 422),
        ("surrogate-in-ticket-json-escape", b'{"tickets": [{"custom_id": "a", '
                                            b'"question": "\\udfff"}]}', 422),
    ]
    for name, body, status in batch_json:
        out.append(RequestCase("batches-json-body", name, "POST", "/v1/batches", status,
                               _job(body)))
    upload = [
        ("empty", b"", "application/jsonl", 422), ("only-blank-lines", b"\n \n\t\n",
                                                   "application/jsonl", 422),
        ("bom-only", b"\xef\xbb\xbf", "application/jsonl", 422),
        ("unsupported-type", GOOD_FIRST, "text/csv", 422),
        ("xml-type", GOOD_FIRST, "application/xml", 422),
        ("multipart-without-file", b"--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n"
         b"1\r\n--b--\r\n", "multipart/form-data; boundary=b", 422),
        ("too-many-lines", b"".join(jl({"custom_id": f"n{i}", "question": "q?"}) + b"\n"
                                    for i in range(6)), "application/jsonl", 413),
        ("too-many-bytes", GOOD_FIRST + b"\n" + b" " * 1_100_000 + b"\n", "application/jsonl",
         413),
    ]
    for name, body, ctype, status in upload:
        out.append(RequestCase("batches-upload-whole", name, "POST", "/v1/batches", status,
                               body, ctype))
    for name, query in [("budget-true", 'budget={"max_steps":true}'),
                        ("budget-nan", 'budget={"max_cost_usd":NaN}'),
                        ("budget-not-json", "budget=cheap"),
                        ("budget-unknown", 'budget={"max_stepz":1}'),
                        ("budget-string-int", 'budget={"max_steps":"3"}'),
                        ("webhook-private", "webhook_url=http://10.0.0.1/h"),
                        ("webhook-shared", "webhook_url=http://100.64.0.1/h"),
                        ("webhook-scheme", "webhook_url=gopher://x.example/")]:
        out.append(RequestCase("batches-upload-options", name, "POST", f"/v1/batches?{query}",
                               422, GOOD_FIRST + b"\n", "application/jsonl"))
    reads = [
        ("job-unknown", "GET", "/v1/jobs/job_nope", 404, True),
        ("job-not-an-id", "GET", "/v1/jobs/..%2F..%2Fetc", 404, True),
        ("job-evidence-unknown", "GET", "/v1/jobs/xyz/evidence", 404, True),
        ("job-ledger-unknown", "GET", "/v1/jobs/job_x/ledger", 404, True),
        ("batch-unknown", "GET", "/v1/batches/bat_nope", 404, True),
        ("batch-results-unknown", "GET", "/v1/batches/nope/results", 404, True),
        ("batch-errors-unknown", "GET", "/v1/batches/bat_x/errors", 404, True),
        ("batch-cancel-unknown", "POST", "/v1/batches/x/cancel", 404, True),
        ("list-limit-zero", "GET", "/v1/batches?limit=0", 422, True),
        ("list-limit-text", "GET", "/v1/batches?limit=ten", 422, True),
        ("list-limit-huge", "GET", "/v1/batches?limit=100000", 422, True),
        ("unknown-path", "GET", "/v1/nothing", 404, True),
        ("unknown-root", "GET", "/admin", 404, True),
        ("wrong-method-jobs", "DELETE", "/v1/jobs", 405, True),
        ("wrong-method-batch", "PUT", "/v1/batches/bat_x", 405, True),
        ("no-key", "GET", "/v1/batches", 401, False),
        ("no-key-post", "POST", "/v1/jobs", 401, False),
    ]
    for name, method, path, status, auth in reads:
        out.append(RequestCase("reads-and-routing", name, method, path, status, None, None,
                               auth))
    for name, header in [("bad-scheme", "Basic abc"), ("unknown-key", "Bearer nope"),
                         ("empty-bearer", "Bearer "), ("garbage", "\x7f")]:
        out.append(RequestCase("auth", name, "GET", "/v1/batches", 401, None, None, False,
                               {"Authorization": header}))
    return out


REQUEST_CASES = _request_cases()
