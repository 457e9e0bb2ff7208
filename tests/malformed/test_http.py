"""The malformed-input corpus over HTTP (the FastAPI app through TestClient): never a 500,
every refusal a 4xx in the ``{"error": {"code", "message"}}`` shape, every bad line of an upload
an errors-file entry with its line number, and the good lines beside it kept."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.malformed.corpus import (
    ENCODING_CASES,
    GOOD_FIRST,
    GOOD_LAST,
    LINE_CASES,
    REQUEST_CASES,
    EncodingCase,
    LineCase,
    RequestCase,
    framed,
)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_error_shape(response: httpx.Response) -> dict[str, Any]:
    """A 4xx whose body is ``{"error": {"code": str, "message": str, ...}}`` and nothing else."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    body = response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error["code"], str) and error["code"]
    assert isinstance(error["message"], str) and error["message"]
    return error


def upload(client: TestClient, key: str, body: bytes, query: str = "") -> httpx.Response:
    return client.post(f"/v1/batches{query}", content=body,
                       headers={**auth(key), "content-type": "application/jsonl"})


def lines_of(client: TestClient, key: str, batch_id: str, what: str) -> list[dict[str, Any]]:
    response = client.get(f"/v1/batches/{batch_id}/{what}", headers=auth(key))
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


@pytest.mark.parametrize("case", LINE_CASES, ids=lambda c: f"{c.family}:{c.name}")
def test_a_bad_line_fails_alone_in_the_errors_file(client, public_key, case: LineCase):
    response = upload(client, public_key, framed(case))
    assert response.status_code == 201, response.text[:300]
    batch = response.json()
    assert batch["counts"]["total"] == 2 and batch["counts"]["invalid"] == 1
    (error,) = lines_of(client, public_key, batch["id"], "errors")
    assert error["line"] == 2 and error["error"]["code"] == case.code, error
    assert error["error"]["message"]
    kept = [r["custom_id"] for r in lines_of(client, public_key, batch["id"], "results")]
    assert kept == ["good-1", "good-2"]


@pytest.mark.parametrize("case", ENCODING_CASES, ids=lambda c: c.name)
def test_good_tickets_in_any_layout_are_all_accepted(client, public_key, case: EncodingCase):
    response = upload(client, public_key, case.body)
    assert response.status_code == 201, response.text[:300]
    batch_id = response.json()["id"]
    assert lines_of(client, public_key, batch_id, "errors") == []
    kept = [r["custom_id"] for r in lines_of(client, public_key, batch_id, "results")]
    assert kept == list(case.custom_ids)


@pytest.mark.parametrize("case", REQUEST_CASES, ids=lambda c: f"{c.family}:{c.name}")
def test_a_bad_request_gets_a_4xx_in_the_error_shape(client, public_key, case: RequestCase):
    headers = dict(case.headers)
    if case.auth:
        headers |= auth(public_key)
    if case.content_type:
        headers["content-type"] = case.content_type
    response = client.request(case.method, case.path, content=case.body, headers=headers)
    error = assert_error_shape(response)
    assert response.status_code == case.status, (response.status_code, error)


def test_one_over_long_ticket_does_not_refuse_the_batch(client, public_key):
    body = GOOD_FIRST + b"\n" + json.dumps({"custom_id": "long", "question": "x" * 25_000}
                                          ).encode() + b"\n" + GOOD_LAST + b"\n"
    batch = upload(client, public_key, body).json()
    (error,) = lines_of(client, public_key, batch["id"], "errors")
    assert (error["line"], error["custom_id"]) == (2, "long")
    assert "RAGQ_MAX_QUESTION_CHARS" in error["error"]["message"]


def test_the_json_form_fails_a_bad_ticket_alone_by_index(client, public_key):
    tickets = [{"custom_id": "a", "question": "q?"}, {"custom_id": "b", "budget": 1},
               {"custom_id": "c", "question": "q?", "budget": {"max_steps": True}},
               {"custom_id": "d", "question": "x" * 20_001}, {"custom_id": "e", "question": "ok"}]
    response = client.post("/v1/batches", json={"tickets": tickets}, headers=auth(public_key))
    assert response.status_code == 201, response.text
    errors = lines_of(client, public_key, response.json()["id"], "errors")
    assert [(e["line"], e["error"]["code"]) for e in errors] == [
        (2, "invalid_ticket"), (3, "invalid_ticket"), (4, "question_too_long")]


GOOD_LINE = st.builds(lambda i, q: json.dumps({"custom_id": f"g{i}", "question": q}).encode(),
                      st.integers(0, 10**9), st.text(min_size=1, max_size=40).filter(
                          lambda q: q.strip() and not any("\ud800" <= c <= "\udfff" or c == "\x00"
                                                          for c in q)))
BAD_LINE = st.one_of(
    st.binary(min_size=1, max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b
                                              and b.strip()),
    st.sampled_from([c.line for c in LINE_CASES if len(c.line) < 2000]))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), GOOD_LINE, BAD_LINE), min_size=1, max_size=4))
@example(rows=[(False, b'{"custom_id": "g0", "question": "0"}', b"\x00"),
               (True, b'{"custom_id": "g1", "question": "1"}', b"\x1c"),
               (False, b'{"custom_id": "g2", "question": "2"}', b"\x1c")])
def test_random_uploads_never_lose_a_good_line(client, public_key, rows):
    """Property: whatever bytes sit between good tickets, every good ticket is accepted, and
    every other non-blank line is in the errors file with its number."""
    lines, good_ids, seen = [], [], set()
    for is_good, good, bad in rows:
        if is_good:
            custom_id = json.loads(good)["custom_id"]
            if custom_id in seen:
                continue
            seen.add(custom_id)
            good_ids.append(custom_id)
            lines.append(good)
        else:
            lines.append(bad)
    response = upload(client, public_key, b"\n".join(lines) + b"\n")
    if not good_ids and response.status_code == 422:  # nothing at all in the upload
        assert_error_shape(response)
        return
    assert response.status_code == 201, response.text[:300]
    batch_id = response.json()["id"]
    results = lines_of(client, public_key, batch_id, "results")
    kept = [r["custom_id"] for r in results]
    assert [k for k in kept if k in seen] == good_ids
    errors = lines_of(client, public_key, batch_id, "errors")
    assert len(errors) + len(results) == sum(1 for line in lines if not _blank(line))


def _blank(line: bytes) -> bool:
    """A line the upload skips: text of whitespace only, Unicode's whitespace included (the
    file separator b"\x1c" is blank; found by this property test). Bytes that are no UTF-8
    are never blank: they are an error line."""
    try:
        return not line.decode("utf-8").strip()
    except UnicodeDecodeError:
        return False


def test_the_openapi_document_promises_the_error_shape_only(client):
    """FastAPI's default 422 body (``{"detail": [...]}``) is never served, so never documented."""
    text = client.get("/openapi.json").text
    assert "HTTPValidationError" not in text and '"ErrorOut"' in text
