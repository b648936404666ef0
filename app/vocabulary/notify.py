"""What a notification rule can ask for: the events it follows and the channels it sends on."""

from __future__ import annotations

from enum import StrEnum


class NotifyEvent(StrEnum):
    STARTED = "started"
    ENDED = "ended"
    FAILED = "failed"
    ALLOCATION = "allocation"
    """A project the rule's owner manages used 80 %, then 95 %, of its allocation."""
    SESSION_IDLE = "session_idle"
    """An interactive session of the rule's owner has been idle and will soon be ended."""


class Channel(StrEnum):
    EMAIL = "email"
    WEBHOOK = "webhook"
    BROWSER = "browser"
    """Shown by an open portal tab of its owner's; nothing is sent from the server."""


NOTIFY_EVENTS = tuple(event.value for event in NotifyEvent)
CHANNELS = tuple(channel.value for channel in Channel)
