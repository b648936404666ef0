"""Webhook signatures and the retry schedule."""

from __future__ import annotations

import hashlib
import hmac
import itertools
from datetime import timedelta

from app.notifications import signing
from app.notifications.retry import MAX_ATTEMPTS, retry_delay


def test_signature_is_the_hex_hmac_sha256_of_the_exact_body() -> None:
    body = b'{"event":"ended","id":7}'
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert signing.sign("s3cret", body) == f"sha256={expected}"


def test_receiver_check_accepts_the_signature_and_refuses_a_changed_body() -> None:
    body = b'{"event":"ended","id":7}'
    signature = signing.sign("s3cret", body)
    assert signing.is_valid("s3cret", body, signature)
    assert not signing.is_valid("s3cret", body + b" ", signature)
    assert not signing.is_valid("other", body, signature)


def test_new_secrets_are_long_and_different() -> None:
    first, second = signing.new_secret(), signing.new_secret()
    assert first != second and len(first) >= 40


def test_waits_double_from_thirty_seconds() -> None:
    waits = [retry_delay(attempt) for attempt in range(1, MAX_ATTEMPTS)]
    assert waits[:4] == [timedelta(seconds=s) for s in (30, 60, 120, 240)]
    assert all(later == 2 * earlier for earlier, later in itertools.pairwise(waits))


def test_no_attempt_is_left_after_the_last_one() -> None:
    assert retry_delay(MAX_ATTEMPTS) is None
    assert retry_delay(MAX_ATTEMPTS + 3) is None


def test_waits_never_exceed_an_hour() -> None:
    assert all(
        (wait := retry_delay(attempt)) is None or wait <= timedelta(hours=1)
        for attempt in range(0, 40)
    )
