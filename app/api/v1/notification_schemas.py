"""Bodies of the notification routes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.vocabulary.notify import Channel, NotifyEvent


class RuleIn(BaseModel):
    """``job_id`` left out: every job of yours. A webhook needs ``webhook_url``."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"event": "ended", "channel": "email"},
                {
                    "event": "failed",
                    "channel": "webhook",
                    "job_id": 42,
                    "webhook_url": "https://example.org/hooks/portal",
                },
            ]
        },
    )

    event: NotifyEvent = Field(
        description="started: it began to run; ended: any end; failed: any end except "
        "completed and cancelled."
    )
    channel: Channel
    job_id: int | None = Field(default=None, ge=1, le=2**31 - 1)
    webhook_url: str | None = Field(default=None, max_length=2000)


class RuleOut(BaseModel):
    id: int
    event: NotifyEvent
    channel: Channel
    job_id: int | None = Field(description="None: every job of yours.")
    target: str = Field(description="The webhook's address, or your e-mail address.")
    created_at: datetime


class CreatedRuleOut(RuleOut):
    secret: str | None = Field(
        description="A webhook's signing secret, shown in this answer only: each request "
        "carries X-Portal-Signature: sha256=<hex HMAC-SHA256 of the body with it>."
    )


class DeliveryOut(BaseModel):
    at: datetime
    channel: Channel
    event: NotifyEvent
    job_id: int
    attempt: int
    is_success: bool
    status_code: int | None = Field(description="The receiver's HTTP status or the SMTP reply.")
    response: str | None
    error: str | None
