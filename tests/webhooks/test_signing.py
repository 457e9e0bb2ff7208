"""Standard Webhooks signatures: the reference vector, round trips, tampering and replay."""

from __future__ import annotations

import pytest

from ragq.errors import WebhookSignatureError
from ragq.webhooks import new_secret, sign, verify_signature, webhook_id_for

# The example from the Standard Webhooks specification.
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
MSG_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
STAMP = 1614265330
BODY = b'{"test": 2432232314}'
EXPECTED = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_signature_matches_the_standard_webhooks_reference_vector():
    assert sign(SECRET, msg_id=MSG_ID, timestamp=STAMP, body=BODY) == EXPECTED
    verify_signature(SECRET, msg_id=MSG_ID, timestamp=str(STAMP), body=BODY,
                     signature=f"v1,bogus {EXPECTED}", now=STAMP + 10)


@pytest.mark.parametrize("change", ["body", "id", "secret", "timestamp"])
def test_any_change_breaks_the_signature(change):
    secret = new_secret()
    signature = sign(secret, msg_id="msg_1", timestamp=1000, body=b"{}")
    args = {"msg_id": "msg_1", "timestamp": 1000, "body": b"{}", "signature": signature}
    if change == "body":
        args["body"] = b'{"x":1}'
    elif change == "id":
        args["msg_id"] = "msg_2"
    elif change == "timestamp":
        args["timestamp"] = 1001
    else:
        secret = new_secret()
    with pytest.raises(WebhookSignatureError, match="no webhook-signature"):
        verify_signature(secret, now=1000, **args)


def test_old_or_future_timestamps_are_refused_as_replays():
    secret = new_secret()
    signature = sign(secret, msg_id="m", timestamp=1000, body=b"x")
    verify_signature(secret, msg_id="m", timestamp=1000, body=b"x", signature=signature,
                     now=1299)
    with pytest.raises(WebhookSignatureError, match="300s"):
        verify_signature(secret, msg_id="m", timestamp=1000, body=b"x", signature=signature,
                         now=1301)
    with pytest.raises(WebhookSignatureError, match="not an integer"):
        verify_signature(secret, msg_id="m", timestamp="soon", body=b"x", signature=signature)


def test_secrets_are_whsec_base64_and_ids_are_stable_per_event():
    assert new_secret().startswith("whsec_") and new_secret() != new_secret()
    assert webhook_id_for("job.completed", "job_1") == webhook_id_for("job.completed", "job_1")
    assert webhook_id_for("job.completed", "job_1") != webhook_id_for("job.failed", "job_1")
    with pytest.raises(WebhookSignatureError, match="base64"):
        sign("whsec_***", msg_id="m", timestamp=1, body=b"")
