"""JSON shapes of announcements and of a submission's warnings."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field


class AnnouncementOut(BaseModel):
    id: int
    source: Literal["admin", "maintenance"] = Field(
        description="admin: posted by an administrator; maintenance: a cluster's maintenance "
        "reservation, read from its scheduler."
    )
    text: str = Field(
        description="Plain text (never markup) in the language asked for; http(s) addresses "
        "in it are the only links."
    )
    shown_from: datetime
    shown_until: datetime | None = Field(description="null: until withdrawn.")
    is_dismissible: bool
    is_dismissed: bool = Field(description="You dismissed it (pages no longer show it to you).")
    cluster: str | None = Field(default=None, description="The cluster stopping (maintenance).")
    window_start: datetime | None = Field(default=None, description="Maintenance begins.")
    window_end: datetime | None = Field(
        default=None, description="Maintenance ends (null: not said)."
    )


class AnnouncementIn(BaseModel):
    """An administrator's announcement (a token with the admin scope)."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "text": "Scratch is read-only tonight; see https://status.example.org.",
                    "shown_until": "2026-12-01T08:00:00Z",
                    "is_dismissible": True,
                }
            ]
        },
    )

    text: str = Field(min_length=1, max_length=4000, description="Plain text; see AnnouncementOut.")
    shown_from: AwareDatetime | None = Field(default=None, description="null: now.")
    shown_until: AwareDatetime | None = Field(default=None, description="null: until withdrawn.")
    is_dismissible: bool = True


class AnnouncementPageOut(BaseModel):
    items: list[AnnouncementOut]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page.")
    next: str | None = Field(description="The URL of the next page, or null on the last one.")


class SubmitWarningOut(BaseModel):
    code: Literal["maintenance", "allocation"] = Field(
        description="maintenance: the time limit reaches into the cluster's next maintenance "
        "window, so the job would wait until after it. allocation: the job may use more CPU "
        "minutes than are left of its project's allocation."
    )
    message: str = Field(description="What to tell the user, in the language asked for.")
    cluster: str
    window_start: datetime | None = Field(default=None, description="maintenance only.")
    window_end: datetime | None = None
    fitting_minutes: int | None = Field(
        default=None,
        description="maintenance only: the longest time limit that ends before the window "
        "(0 when it is under way).",
    )
    requested_cpu_minutes: int | None = Field(
        default=None, description="allocation only: the most CPU minutes the job may use."
    )


class SubmitCheckOut(BaseModel):
    warnings: list[SubmitWarningOut]
