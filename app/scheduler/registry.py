"""Builds one scheduler adapter per configured cluster."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from app.scheduler.base import SchedulerAdapter
from app.scheduler.config import ClusterConfig, SchedulerName, Transport
from app.scheduler.errors import SchedulerError
from app.scheduler.lsf.adapter import LsfAdapter
from app.scheduler.pbs.adapter import PbsAdapter
from app.scheduler.slurm.adapter import SlurmAdapter
from app.scheduler.slurm.rest import RestTransport
from app.scheduler.slurm.ssh import SshTransport


class UnknownCluster(SchedulerError):
    """No cluster of that name is configured."""


class UnsupportedScheduler(SchedulerError):
    """The clusters file names a scheduler this portal has no adapter for."""


AdapterFactory = Callable[[ClusterConfig, Transport], SchedulerAdapter]


def _slurm(config: ClusterConfig, transport: Transport) -> SchedulerAdapter:
    rest = RestTransport(config) if transport == "rest" else None
    return SlurmAdapter(config, SshTransport(config), rest)


def _pbs(config: ClusterConfig, transport: Transport) -> SchedulerAdapter:
    # PBS has no REST API the portal uses; the clusters file refuses transport = "rest".
    return PbsAdapter(config, SshTransport(config))


def _lsf(config: ClusterConfig, transport: Transport) -> SchedulerAdapter:
    # LSF's commands are its only interface here: OpenLava has no REST service.
    return LsfAdapter(config, SshTransport(config))


ADAPTERS: dict[SchedulerName, AdapterFactory] = {
    "slurm": _slurm,
    "pbs": _pbs,
    "lsf": _lsf,
}
"""Each scheduler's adapter, by the name a cluster's ``scheduler`` key gives."""


def build_adapter(config: ClusterConfig, transport: Transport | None = None) -> SchedulerAdapter:
    """An adapter for ``config``'s scheduler; ``transport`` overrides the configured one."""
    factory = ADAPTERS.get(config.scheduler)
    if factory is None:
        raise UnsupportedScheduler(f"no adapter for scheduler {config.scheduler!r}")
    return factory(config, transport or config.transport)


class Schedulers(Protocol):
    """Adapters by cluster name, as the portal uses them (a registry or a test's own)."""

    def get(self, cluster: str) -> SchedulerAdapter: ...

    def __iter__(self) -> Iterator[str]: ...

    async def close(self) -> None: ...


class SchedulerRegistry:
    """Adapters by cluster name; create once at start-up, close at shutdown."""

    def __init__(self, configs: Mapping[str, ClusterConfig]) -> None:
        self._adapters: dict[str, SchedulerAdapter] = {
            name: build_adapter(config) for name, config in configs.items()
        }

    @classmethod
    def of(cls, adapters: Mapping[str, SchedulerAdapter]) -> SchedulerRegistry:
        """A registry of adapters built elsewhere (another transport, a test scheduler)."""
        registry = cls({})
        registry._adapters = dict(adapters)
        return registry

    def get(self, cluster: str) -> SchedulerAdapter:
        """The adapter for ``cluster``; UnknownCluster if it is not configured."""
        try:
            return self._adapters[cluster]
        except KeyError:
            raise UnknownCluster(f"unknown cluster {cluster!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._adapters)

    async def close(self) -> None:
        """Close every adapter."""
        for adapter in self._adapters.values():
            await adapter.close()
