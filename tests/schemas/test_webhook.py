"""Webhook events built from the schema models: validated, and sent as exactly the bytes the
dict-built payloads of before produced (receivers verify signatures over those bytes)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from ragq.schemas.statuses import BatchStatus, JobStatus
from ragq.schemas.webhook import (
    BATCH_EVENT,
    JOB_EVENT,
    BatchEventCounts,
    WebhookEvent,
    batch_event,
    event_id,
    job_event,
    render_body,
    reviewed_event,
)

BASE = "https://ragq.example/"
ids = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=40)
maybe = st.none() | ids
moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1),
                       timezones=st.just(UTC))
COUNT_KEYS = ["total", "completed", "insufficient_evidence", "budget_exhausted", "needs_review",
              "rejected", "failed", "cancelled", "invalid"]
counts = st.fixed_dictionaries({k: st.integers(0, 10**9) for k in COUNT_KEYS})


def legacy_job_payload(job_id: str, batch_id: str | None, custom_id: str | None,
                       status: JobStatus, stop_reason: str | None, now: datetime
                       ) -> dict[str, Any]:
    """How ``ledger.webhooks.record_job_event`` built the payload before the models did."""
    data = {"job_id": job_id, "batch_id": batch_id, "custom_id": custom_id,
            "status": str(status), "stop_reason": stop_reason,
            "results_url": f"/v1/jobs/{job_id}"}
    return {"type": JOB_EVENT[status], "timestamp": now.isoformat(), "data": data}


def legacy_batch_payload(batch_id: str, status: BatchStatus, counts: dict[str, int],
                         now: datetime) -> dict[str, Any]:
    """How ``ledger.webhooks.record_batch_event`` built the payload before the models did."""
    data = {"batch_id": batch_id, "status": str(status), "counts": counts,
            "results_url": f"/v1/batches/{batch_id}/results",
            "errors_url": f"/v1/batches/{batch_id}/errors"}
    return {"type": BATCH_EVENT[status], "timestamp": now.isoformat(), "data": data}


@given(ids, maybe, maybe, st.sampled_from(sorted(JOB_EVENT)), maybe, moments)
def test_a_job_event_is_sent_as_the_same_bytes_as_before(job_id, batch_id, custom_id, status,
                                                         stop_reason, now):
    event = job_event(job_id=job_id, batch_id=batch_id, custom_id=custom_id, status=status,
                      stop_reason=stop_reason, at=now)
    stored = event.model_dump(mode="json")
    legacy = legacy_job_payload(job_id, batch_id, custom_id, status, stop_reason, now)
    assert stored == legacy
    assert render_body(stored, base_url=BASE) == render_body(legacy, base_url=BASE)
    assert event.webhook_id == event_id(JOB_EVENT[status], job_id)
    assert WebhookEvent.model_validate(stored) == event  # what the ledger stored reads back


@given(ids, st.sampled_from(sorted(BATCH_EVENT)), counts, moments)
def test_a_batch_event_is_sent_as_the_same_bytes_as_before(batch_id, status, tally, now):
    event = batch_event(batch_id=batch_id, status=status, counts=BatchEventCounts(**tally),
                        at=now)
    stored = event.model_dump(mode="json")
    legacy = legacy_batch_payload(batch_id, status, tally, now)
    assert stored == legacy
    assert render_body(stored, base_url=BASE) == render_body(legacy, base_url=BASE)
    assert event.webhook_id == event_id(BATCH_EVENT[status], batch_id)
    assert WebhookEvent.model_validate(stored) == event


def test_the_results_url_is_made_absolute_when_sent():
    event = job_event(job_id="job_1", batch_id=None, custom_id=None, status=JobStatus.FAILED,
                      stop_reason="boom", at=datetime(2024, 5, 1, tzinfo=UTC))
    body = render_body(event.model_dump(mode="json"), base_url=BASE)
    assert b'"results_url":"https://ragq.example/v1/jobs/job_1"' in body
    assert b'"timestamp":"2024-05-01T00:00:00+00:00"' in body


NOW = datetime(2024, 5, 1, 12, tzinfo=UTC)
ZERO = BatchEventCounts(**dict.fromkeys(COUNT_KEYS, 0))


def test_events_of_unfinished_entities_are_refused():
    with pytest.raises(ValueError, match="has not ended"):
        job_event(job_id="job_1", batch_id=None, custom_id=None, status=JobStatus.RETRIEVING,
                  stop_reason=None, at=NOW)
    with pytest.raises(ValueError, match="has not finished"):
        batch_event(batch_id="bat_1", status=BatchStatus.IN_PROGRESS, counts=ZERO, at=NOW)


def test_malformed_events_fail_validation():
    good = job_event(job_id="job_1", batch_id=None, custom_id=None, status=JobStatus.CANCELLED,
                     stop_reason="cancelled", at=NOW).model_dump(mode="json")
    wrong_type = {**good, "type": "job.completed"}  # a cancelled job is job.cancelled
    naive = {**good, "timestamp": "2024-05-01T12:00:00"}
    extra = {**good, "data": {**good["data"], "answer": "leaked"}}
    for payload in (wrong_type, naive, extra):
        with pytest.raises(ValidationError):
            WebhookEvent.model_validate(payload)
    with pytest.raises(ValidationError):
        BatchEventCounts(**{**ZERO.model_dump(), "failed": -1})
    with pytest.raises(ValidationError):
        job_event(job_id="job_1", batch_id=None, custom_id=None, status=JobStatus.FAILED,
                  stop_reason=None, at=datetime(2024, 5, 1))  # naive: whose midnight?


def test_the_timestamp_keeps_its_offset_as_given():
    plus_two = timezone(timedelta(hours=2))
    event = batch_event(batch_id="bat_1", status=BatchStatus.COMPLETED, counts=ZERO,
                        at=datetime(2024, 5, 1, 14, tzinfo=plus_two))
    assert event.model_dump(mode="json")["timestamp"] == "2024-05-01T14:00:00+02:00"


def test_a_job_entering_review_is_its_own_event():
    event = job_event(job_id="job_1", batch_id="bat_1", custom_id="t1",
                      status=JobStatus.NEEDS_REVIEW, stop_reason="sufficient", at=NOW)
    assert event.type == "job.needs_review"
    assert event.webhook_id == event_id("job.needs_review", "job_1")


@pytest.mark.parametrize("status", [JobStatus.COMPLETED, JobStatus.REJECTED])
def test_a_resolution_is_job_reviewed_with_the_new_status(status: JobStatus):
    event = reviewed_event(job_id="job_1", batch_id=None, custom_id=None, status=status,
                           stop_reason=None, at=NOW)
    stored = event.model_dump(mode="json")
    assert (stored["type"], stored["data"]["status"]) == ("job.reviewed", str(status))
    assert WebhookEvent.model_validate(stored) == event
    # distinct from the job's other events: a receiver deduplicating on webhook-id keeps both
    assert event.webhook_id not in {event_id("job.completed", "job_1"),
                                    event_id("job.needs_review", "job_1")}


def test_a_reviewed_event_of_a_job_still_waiting_is_refused():
    with pytest.raises(ValueError, match="completed or rejected"):
        reviewed_event(job_id="job_1", batch_id=None, custom_id=None,
                       status=JobStatus.NEEDS_REVIEW, stop_reason=None, at=NOW)
    good = reviewed_event(job_id="job_1", batch_id=None, custom_id=None,
                          status=JobStatus.REJECTED, stop_reason=None,
                          at=NOW).model_dump(mode="json")
    with pytest.raises(ValidationError):
        WebhookEvent.model_validate({**good, "data": {**good["data"], "status": "failed"}})
