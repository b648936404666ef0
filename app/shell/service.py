"""A shell on a cluster's login node, opened as the actor's own cluster account (ADR 0026).

Who may open one and where, how many at once, and the audit trail of each shell's start and
end (never what is typed). The shell itself is the scheduler library's (``Terminals``); the
browser's side of it is the web surface's. No database session is held while a shell is open:
each audit event is written in a short transaction of its own.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.service import Origin, record_action
from app.config import Settings
from app.db import unit_of_work
from app.errors import Conflict, Forbidden, NotFound, ServiceUnavailable
from app.i18n import _, ngettext
from app.models.base import utc_now
from app.scheduler.errors import PermissionDenied, SchedulerUnavailable
from app.scheduler.registry import Schedulers, UnknownCluster
from app.scheduler.terminals import Terminal, Terminals, TerminalSize, terminals_of
from app.shell import slots
from app.users.actor import Actor

logger = logging.getLogger(__name__)

# How a shell ended, as the audit trail keeps it.
EndedBy = Literal["browser", "idle", "exit", "lost", "signed_out"]


class TooManyShells(Conflict):
    """The user has as many shells open as the site allows."""


@dataclass(slots=True)
class OpenShell:
    """A shell while it is open: its terminal and, once known, how it ended."""

    terminal: Terminal
    cluster: str
    username: str
    ended_by: EndedBy = "browser"


@contextmanager
def _translated(cluster: str) -> Iterator[None]:
    """The scheduler library's refusals to open a shell, in words for the user."""
    try:
        yield
    except PermissionDenied:
        raise Forbidden(_("The login node of %(cluster)s refused you.", cluster=cluster)) from None
    except SchedulerUnavailable:
        raise ServiceUnavailable(
            _("The login node of %(cluster)s did not answer; try again shortly.", cluster=cluster)
        ) from None


class ShellService:
    """Shells on the clusters whose adapters offer them, if the site has not turned them off."""

    def __init__(
        self,
        settings: Settings,
        schedulers: Schedulers,
        sessionmaker: async_sessionmaker[AsyncSession],
    ) -> None:
        self.is_enabled = settings.shell_enabled
        self.idle_timeout = settings.shell_idle_timeout
        self.max_per_user = settings.shell_max_per_user
        self._schedulers = schedulers
        self._sessionmaker = sessionmaker

    def clusters_for(self, actor: Actor | None) -> tuple[str, ...]:
        """The clusters where ``actor`` may open a shell, sorted; none when shells are off."""
        if actor is None or not self.is_enabled:
            return ()
        return tuple(c for c in sorted(self._schedulers) if self._terminals(actor, c) is not None)

    def _terminals(self, actor: Actor, cluster: str) -> tuple[Terminals, str] | None:
        username = actor.username_on(cluster)
        if not self.is_enabled or username is None:
            return None
        try:
            terminals = terminals_of(self._schedulers.get(cluster))
        except UnknownCluster:
            return None
        return None if terminals is None else (terminals, username)

    def check_offered(self, actor: Actor, cluster: str) -> None:
        """NotFound unless ``actor`` may open a shell on ``cluster``."""
        if self._terminals(actor, cluster) is None:
            raise NotFound(_("There is no shell on this cluster for you."))

    @asynccontextmanager
    async def _counted(self, actor: Actor, cluster: str) -> AsyncIterator[None]:
        """A slot among the user's shells in every web process, renewed while it is held."""
        made = self._sessionmaker
        slot = await slots.take(made, actor.user_id, cluster, self.max_per_user, utc_now())
        if slot is None:
            raise TooManyShells(
                ngettext(
                    "You already have %(num)d shell open; close it first.",
                    "You already have %(num)d shells open; close one first.",
                    self.max_per_user,
                )
            )
        renewing = asyncio.create_task(self._renew(slot))
        try:
            yield
        finally:
            renewing.cancel()
            # Shielded: a server shutting down cancels the shell, not the release of its slot.
            await asyncio.shield(slots.give_back(made, slot))

    async def _renew(self, slot: int) -> None:
        while True:
            await asyncio.sleep(slots.RENEW_EVERY.total_seconds())
            try:
                await slots.renew(self._sessionmaker, slot, utc_now())
            except SQLAlchemyError:
                # The database is away: the slot may go stale and stop counting, never more.
                logger.warning("could not renew open shell %s", slot, exc_info=True)

    @asynccontextmanager
    async def open(
        self, actor: Actor, cluster: str, size: TerminalSize, origin: Origin
    ) -> AsyncIterator[OpenShell]:
        """A shell as the actor's account on ``cluster``, closed when the block is left.

        NotFound when there is none for them there, TooManyShells over the site's limit,
        Forbidden or ServiceUnavailable when the login node refuses or does not answer.
        """
        found = self._terminals(actor, cluster)
        if found is None:
            raise NotFound(_("There is no shell on this cluster for you."))
        terminals, username = found
        async with self._counted(actor, cluster), AsyncExitStack() as stack:
            with _translated(cluster):
                terminal = await stack.enter_async_context(terminals.open(username, size))
            shell = OpenShell(terminal, cluster, username)
            await self._audit(actor, origin, "shell.open", cluster, {"username": username})
            started = time.monotonic()
            try:
                yield shell
            finally:
                seconds = round(time.monotonic() - started)
                # Shielded: a server shutting down cancels the shell, not its record.
                ended = {"username": username, "ended_by": shell.ended_by, "seconds": seconds}
                await asyncio.shield(self._audit(actor, origin, "shell.close", cluster, ended))

    async def _audit(
        self, actor: Actor, origin: Origin, action: str, cluster: str, details: dict[str, object]
    ) -> None:
        async with unit_of_work(self._sessionmaker) as session:
            target = ("cluster", cluster)
            await record_action(session, actor.user_id, origin, action, target, **details)
