"""The LSF adapter's preflight reads a script's own #BSUB lines against the queues."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.jobs.submission import preflight_failure
from app.observability.scheduler import InstrumentedAdapter
from app.scheduler.capabilities import capabilities_of
from app.scheduler.errors import PreflightFailed
from app.scheduler.types import JobSpec
from tests.unit.scheduler.lsf.test_lsf_adapter import FIXTURES, adapter_with, answer

GPU_JOBSCRIPT = (Path(__file__).parents[3] / "fixtures" / "lsf" / "gpu-jobscript.sh").read_text()


def queues_answers() -> dict[str, object]:
    return {
        "bqueues": answer((FIXTURES / "bqueues-l.txt").read_text()),
        "bhosts": answer((FIXTURES / "bhosts-w.txt").read_text()),
    }


async def test_the_scripts_own_lines_are_named_rather_than_the_fields_they_became() -> None:
    adapter, _ = adapter_with(queues_answers())  # type: ignore[arg-type]
    spec = JobSpec(script=GPU_JOBSCRIPT, partition="gpu", ntasks=4)
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(spec, "alice", ask_sbatch=False)
    assert info.value.problems == [
        (
            "script",
            "line 4: #BSUB -q gpu: this cluster has no queue gpu (it has: normal, short) "
            "(bsub: gpu: No such queue. Job not submitted.)",
        )
    ]


async def test_several_lines_of_one_script_are_all_kept_in_the_refusal() -> None:
    adapter, _ = adapter_with(queues_answers())  # type: ignore[arg-type]
    script = "#!/bin/bash\n#BSUB -n 8\n#BSUB -W 9999\nhostname\n"
    with pytest.raises(PreflightFailed) as info:
        await adapter.preflight(JobSpec(script=script), "alice", ask_sbatch=False)
    fields = preflight_failure(info.value).fields
    assert list(fields) == ["script"]
    assert fields["script"].startswith("line 2: #BSUB -n 8: 8 cores asked")
    assert (
        "; line 3: #BSUB -W 9999: 9999 minutes asked, queue normal allows at most"
        in (fields["script"])
    )


def test_an_instrumented_adapter_keeps_the_schedulers_capabilities() -> None:
    adapter, _ = adapter_with({})
    wrapped = InstrumentedAdapter("lsfcluster", adapter)  # type: ignore[arg-type]
    assert capabilities_of(wrapped).scheduler == "lsf"
    assert capabilities_of(wrapped).partition_word == "queue"
