"""The options sbatch accepts (Slurm 22.05 to 26.05), for reading ``#SBATCH`` lines.

Each entry: long name → (short letter or "", how it takes a value). ``required`` options
consume the next word when written ``--opt value``; ``optional`` ones take a value only as
``--opt=value``; ``none`` take none. Taken from sbatch's manual page of each version; an
option only some versions know is listed, and the cluster's own sbatch still has the last word.
"""

from __future__ import annotations

import difflib
from typing import Literal

Arity = Literal["required", "optional", "none"]

_REQUIRED = """
account:A acctg-freq array:a batch bb bbf begin:b chdir:D cluster-constraint clusters:M
comment constraint:C container container-id core-spec:S cores-per-socket cpu-freq
cpus-per-gpu cpus-per-task:c deadline delay-boot dependency:d distribution:m error:e
exclude:x export-file extra extra-node-info:B gid gpu-bind gpu-freq gpus:G gpus-per-node
gpus-per-socket gpus-per-task gres gres-flags hint input:i job-name:J kill-on-invalid-dep
licenses:L mail-type mail-user mcs-label mem mem-bind mem-per-cpu mem-per-gpu mincpus
network nodefile:F nodelist:w nodes:N ntasks:n ntasks-per-core ntasks-per-gpu
ntasks-per-node ntasks-per-socket open-mode output:o partition:p power prefer priority
profile qos:q reservation segment signal sockets-per-node switches thread-spec
threads-per-core time:t time-min tmp tres-bind tres-per-task uid wait-all-nodes wckey wrap
"""
_OPTIONAL = "exclusive export get-user-env nice no-kill:k propagate resv-ports"
_NONE = """
contiguous help:h hold:H ignore-pbs no-requeue overcommit:O oversubscribe:s parsable
quiet:Q reboot requeue spread-job test-only usage use-min-nodes verbose:v version:V wait:W
"""


def _table() -> dict[str, tuple[str, Arity]]:
    table: dict[str, tuple[str, Arity]] = {}
    groups: tuple[tuple[str, Arity], ...] = (
        (_REQUIRED, "required"),
        (_OPTIONAL, "optional"),
        (_NONE, "none"),
    )
    for words, arity in groups:
        for word in words.split():
            name, _, short = word.partition(":")
            table[name] = (short, arity)
    return table


OPTIONS: dict[str, tuple[str, Arity]] = _table()
"""Long option name → (short letter, arity)."""

SHORT: dict[str, str] = {short: name for name, (short, _) in OPTIONS.items() if short}
"""Short letter → long option name."""

# Options whose effect the portal decides itself or that make no sense in a batch script
# submitted through it (sbatch's own output format, waiting for the job, test runs).
PORTAL_OWNED = frozenset({"parsable", "test-only", "wait", "help", "usage", "version", "wrap"})


def unknown_option_message(option: str) -> str:
    """``sbatch has no option --ntaks-per-node (did you mean --ntasks-per-node?)``."""
    name = option.lstrip("-")
    close = difflib.get_close_matches(name, list(OPTIONS), n=1, cutoff=0.6)
    hint = f" (did you mean --{close[0]}?)" if close else ""
    return f"sbatch has no option {option}{hint}"
