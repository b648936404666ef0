"""Closed-loop throughput of the job list page against a bare endpoint of the same framework
returning the same bytes, with the same number of uvicorn workers, measured in one run.

    apt-get install wrk   # the load generator: C, so the client costs little of 2 cores
    .venv/bin/python bench/bench_job_list.py [--jobs 20000] [--workers 1] [--connections 32]

Seeds the demo users and N finished jobs into a fresh PostgreSQL database (as
bench_load.py), signs alice in, saves the bytes of her job list and serves them from
bare_app.py. Then wrk drives each in turn, several rounds, alternating, with alice's
session cookie: the job list, the portal's lightest signed-in page (the floor every page
pays) and the bare endpoint. Prints requests/s and latency per round and the medians' ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
from bench_load import (
    CLUSTERS_FILE,
    ROOT,
    _sign_in,
    database_url,
    free_port,
    fresh_database,
    seed,
    start_server,
    wait_until_answers,
)

# The floor of any signed-in page: who is asking (session, roles, announcements) and the
# page's layout, with a two-line form for content and no query of its own.
LIGHTEST = "/settings/language"
WRK_LINE = re.compile(r"Requests/sec:\s+([\d.]+)")
PERCENTILE = re.compile(r"^\s+(50|90|99)%\s+([\d.]+)(us|ms|s)\s*$", re.MULTILINE)
UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


async def alice_page(base: str) -> tuple[str, bytes]:
    """alice's session cookie header and the bytes of her job list."""
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        await _sign_in(client, "alice")
        page = await client.get("/jobs")
        page.raise_for_status()
        cookie = "; ".join(f"{name}={value}" for name, value in client.cookies.items())
        return cookie, page.content


def start_bare(body: Path, workers: int) -> subprocess.Popen[bytes]:
    port = free_port()
    argv = [sys.executable, "-m", "uvicorn", "--factory", "bare_app:create", "--port", str(port)]
    argv += ["--no-access-log", "--log-level", "warning", "--workers", str(workers)]
    env = {**os.environ, "BENCH_BARE_BODY": str(body)}
    bare = subprocess.Popen(argv, env=env, cwd=Path(__file__).parent)
    bare.args = f"http://127.0.0.1:{port}"  # type: ignore[assignment]
    wait_until_answers(f"{bare.args}/jobs", "the bare endpoint")
    return bare


def wrk(url: str, cookie: str, connections: int, seconds: float) -> tuple[float, dict[str, float]]:
    """(requests/s, latency percentiles in ms) of one wrk run; any non-2xx answer fails it."""
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds:.0f}s", "--latency"]
    argv += ["-H", f"Cookie: {cookie}", url]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"wrk saw errors against {url}:\n{out}")
    match = WRK_LINE.search(out)
    if match is None:
        raise RuntimeError(f"no throughput in wrk's output:\n{out}")
    latency = {f"p{p}": float(v) * UNIT_MS[u] for p, v, u in PERCENTILE.findall(out)}
    return float(match.group(1)), latency


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers, both servers")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=15.0, help="per round and server")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is missing: apt-get install wrk")
    url = database_url().replace("_load", "_joblist")
    fresh_database(url)
    env = {**os.environ, "PORTAL_DATABASE_URL": url, "PORTAL_CLUSTERS_FILE": CLUSTERS_FILE}
    subprocess.run(
        [sys.executable, "-m", "app.seed"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL
    )
    asyncio.run(seed(url, args.jobs, 1))
    portal_args = argparse.Namespace(web_workers=args.workers, poller="process", poll_interval=60)
    logs = Path(tempfile.gettempdir())
    portal, base = start_server(url, portal_args, logs / "bench_job_list_server.log")
    bare = None
    try:
        cookie, body = asyncio.run(alice_page(base))
        saved = logs / "bench_job_list_body.html"
        saved.write_bytes(body)
        bare = start_bare(saved, args.workers)
        urls = {
            "portal": f"{base}/jobs",
            "lightest": f"{base}{LIGHTEST}",
            "bare": f"{bare.args}/jobs",
        }
        compare(args, cookie, urls, len(body))
    finally:
        for process in (portal, bare):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)


def compare(args: argparse.Namespace, cookie: str, urls: dict[str, str], size: int) -> None:
    print(
        f"jobs={args.jobs} workers={args.workers} connections={args.connections} "
        f"page={size} bytes, {args.rounds} rounds of {args.seconds:g} s per server"
    )
    figures: dict[str, list[float]] = {name: [] for name in urls}
    for round_ in range(1, args.rounds + 1):
        for name, url in urls.items():
            rps, latency = wrk(url, cookie, args.connections, args.seconds)
            figures[name].append(rps)
            shown = " ".join(f"{k}={v:.1f}ms" for k, v in latency.items())
            print(f"round {round_} {name:6} {rps:8.1f} req/s  {shown}")
    portal, lightest, bare = (statistics.median(figures[n]) for n in ("portal", "lightest", "bare"))
    print(f"median: portal {portal:.1f} req/s, bare {bare:.1f} req/s, ratio {portal / bare:.4f}")
    print(
        f"median: lightest signed-in page {lightest:.1f} req/s; "
        f"job list / lightest page {portal / lightest:.2f}"
    )


if __name__ == "__main__":
    main()
