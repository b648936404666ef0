"""Rendered fragments kept per web worker, for markup a page shows again and again.

A job list that polls every few seconds shows the same rows each time. A fragment is kept
under everything it was rendered from, so one whose inputs changed is a new key and is
rendered anew: nothing is ever stale, and the oldest fragments are let go first.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable

from markupsafe import Markup


class Fragments:
    """At most ``kept`` fragments by key, the first kept let go first.

    Eviction is by age, not use: a hit then costs one dictionary lookup and nothing else.
    """

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._found: dict[Hashable, Markup] = {}

    def get_or_render(self, key: Hashable, render: Callable[[], Markup]) -> Markup:
        try:
            found = self._found.get(key)
        except TypeError:  # a key part that cannot be hashed: rendered every time
            return render()
        if found is None:
            found = self._found[key] = render()
            if len(self._found) > self._kept:
                # Another thread may change the dict between these two steps: then it has
                # let one go itself.
                with contextlib.suppress(RuntimeError, StopIteration, KeyError):
                    del self._found[next(iter(self._found))]
        return found

    def __len__(self) -> int:
        return len(self._found)
