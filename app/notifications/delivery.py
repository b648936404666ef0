"""Sending one claimed notification: e-mail over SMTP or a signed webhook POST.

No database here: the dispatcher claims rows, closes its transaction, and only then calls
these, so a slow mail server or receiver never holds a connection or a lock.
"""

from __future__ import annotations

import time
from email.message import EmailMessage

import aiosmtplib
import httpx

from app import i18n
from app.config import Settings
from app.notifications import signing, wording
from app.notifications.messages import email_message, webhook_body
from app.notifications.outbox import Claimed, Outcome
from app.notifications.retry import SMTP_TIMEOUT_SECONDS, WEBHOOK_TIMEOUT_SECONDS
from app.notifications.urls import UnsafeUrl, check_target
from app.notifications.wording import english

USER_AGENT = "hpc-portal-webhooks/1"


async def _smtp_send(settings: Settings, message: EmailMessage) -> str:
    """The mail server's reply once it accepted ``message``."""
    _, reply = await aiosmtplib.send(
        message,
        hostname=settings.smtp_host,
        port=settings.smtp_port,
        username=settings.smtp_username or None,
        password=settings.smtp_password.get_secret_value() or None,
        use_tls=settings.smtp_security == "tls",
        start_tls=settings.smtp_security == "starttls",
        timeout=SMTP_TIMEOUT_SECONDS,
    )
    return reply


async def send_email(settings: Settings, claimed: Claimed) -> Outcome:
    """The e-mail in the recipient's saved language (English when they chose none); the
    outcome in English, as the log stores it (``wording``)."""
    if not settings.smtp_host:
        return Outcome(False, error=english(wording.NO_MAIL_SERVER), is_permanent=True)
    if not claimed.email:
        return Outcome(False, error=english(wording.NO_ADDRESS), is_permanent=True)
    try:
        with i18n.use_locale(claimed.locale or i18n.DEFAULT_LOCALE):
            message = email_message(claimed, settings.smtp_from)
        reply = await _smtp_send(settings, message)
    except ValueError as error:
        # An address no message can carry (a line break, an unpaired surrogate, one the
        # encoding refuses): the same every time.
        return Outcome(False, error=_unsendable(error), is_permanent=True)
    except aiosmtplib.SMTPResponseException as error:
        # 5xx is the server's final word (no such mailbox, refused sender); 4xx may pass.
        return Outcome(
            False,
            error.code,
            error.message,
            english(wording.MAIL_REFUSED, answer=f"{error.code} {error.message}"),
            is_permanent=error.code >= 500,
        )
    except aiosmtplib.SMTPRecipientsRefused as error:
        refusal = error.recipients[0] if error.recipients else None
        code = refusal.code if refusal else None
        text = refusal.message if refusal else str(error)
        return Outcome(
            False,
            code,
            text,
            english(wording.ADDRESS_REFUSED, answer=text),
            is_permanent=code is not None and code >= 500,
        )
    except (aiosmtplib.SMTPException, OSError) as error:
        return Outcome(False, error=english(wording.MAIL_UNREACHABLE, reason=error)[:1000])
    return Outcome(True, 250, reply)


def _unsendable(error: Exception) -> str:
    return english(wording.UNSENDABLE, reason=f"{type(error).__name__}: {error}")[:1000]


def _headers(claimed: Claimed, body: bytes, timestamp: int) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        signing.SIGNATURE_HEADER: signing.sign(claimed.secret or "", body),
        signing.TIMESTAMP_HEADER: str(timestamp),
        signing.DELIVERY_HEADER: str(claimed.id),
        signing.EVENT_HEADER: claimed.event,
    }


async def send_webhook(settings: Settings, client: httpx.AsyncClient, claimed: Claimed) -> Outcome:
    """POST to the address checked just now, connecting to the checked IP (no rebinding)."""
    try:
        target = await check_target(
            claimed.webhook_url or "", allow_private=settings.webhook_allow_private
        )
    except UnsafeUrl as error:
        return Outcome(False, error=str(error), is_permanent=True)
    timestamp = int(time.time())
    body = webhook_body(claimed, timestamp)
    headers = _headers(claimed, body, timestamp) | {"Host": target.host_header}
    extensions = {"sni_hostname": target.hostname} if target.parts.scheme == "https" else {}
    try:
        request = client.build_request(
            "POST", target.pinned_url, content=body, headers=headers, extensions=extensions
        )
    except (httpx.InvalidURL, ValueError) as error:
        # An address or header no request can carry: trying again would fail the same way.
        return Outcome(False, error=_unsendable(error), is_permanent=True)
    try:
        response = await client.send(request)
    except httpx.HTTPError as error:
        return Outcome(False, error=f"{type(error).__name__}: {error}"[:1000])
    answer = response.text[:200]
    if response.is_success:
        return Outcome(True, response.status_code, answer)
    # A redirect is not followed: it could point anywhere, inside the site included.
    return Outcome(
        False,
        response.status_code,
        answer,
        english(
            wording.RECEIVER_REFUSED, status=f"{response.status_code} {response.reason_phrase}"
        ),
    )


def webhook_client() -> httpx.AsyncClient:
    # No proxies from the environment and no redirects: the checked address is the one used.
    return httpx.AsyncClient(
        timeout=WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False, trust_env=False
    )
