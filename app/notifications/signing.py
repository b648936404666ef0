"""Webhook signatures: an HMAC-SHA256 of the exact body, with the rule's secret.

The body carries the same timestamp as the ``X-Portal-Timestamp`` header, so the signature
covers it: a receiver that refuses old timestamps refuses replays, and one that remembers
``X-Portal-Delivery`` ids drops the rare second delivery (see docs/adr/0013).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

SIGNATURE_HEADER = "X-Portal-Signature"
TIMESTAMP_HEADER = "X-Portal-Timestamp"
DELIVERY_HEADER = "X-Portal-Delivery"
EVENT_HEADER = "X-Portal-Event"
PREFIX = "sha256="


def new_secret() -> str:
    return secrets.token_urlsafe(32)


def sign(secret: str, body: bytes) -> str:
    """The ``X-Portal-Signature`` value for ``body``."""
    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def is_valid(secret: str, body: bytes, signature: str) -> bool:
    """What a receiver checks; compared in constant time."""
    return hmac.compare_digest(sign(secret, body), signature)
