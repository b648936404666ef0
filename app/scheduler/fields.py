"""A record's raw fields by name, compact enough to keep for every job of a large queue.

A poller keeps the last queue read (100,000 records at a large site) so that unchanged
records are not parsed again. As a dict each record's raw fields cost about 700 bytes; here
the names are shared by every record of one format and a record holds only its values.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence


class FieldNames:
    """The field names of one record format, in the order its values come."""

    __slots__ = ("positions",)

    def __init__(self, names: Sequence[str]) -> None:
        self.positions = {name: index for index, name in enumerate(names)}
        if len(self.positions) != len(names):
            raise ValueError(f"field names repeat: {list(names)}")

    def record(self, values: Sequence[str]) -> Fields:
        if len(values) != len(self.positions):
            raise ValueError(f"expected {len(self.positions)} values, got {len(values)}")
        return Fields(self, tuple(values))


class Fields(Mapping[str, str]):
    """One record's values under its format's names; equal to the dict of the same items."""

    __slots__ = ("_names", "_values")

    def __init__(self, names: FieldNames, values: tuple[str, ...]) -> None:
        self._names = names
        self._values = values

    def __getitem__(self, name: str) -> str:
        return self._values[self._names.positions[name]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names.positions)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Fields({dict(self)!r})"
