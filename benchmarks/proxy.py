"""The latency `pipeline proxy` adds, side by side with LiteLLM's proxy, in one run.

    python benchmarks/proxy.py [--requests 200] [--litellm PATH-TO-litellm] [--only 2k,400k]

One upstream (a small uvicorn app on 127.0.0.1 answering OpenAI chat completions at once,
as JSON or as a stream of 20 server-sent events) is called three ways: directly, through
`pipeline proxy` (the built-in default profile: the client's bytes pass through) and, when
`--litellm` names LiteLLM's `litellm` command (`pip install 'litellm[proxy]'` in a venv of
its own), through LiteLLM's proxy configured with one model on the same upstream. For each
body size (2 KB, 400 KB) and concurrency (1, 16) the table shows the direct p50 and p99 in
milliseconds and, for each proxy, what it adds to them (its p50 minus the direct p50), plus
the time to the first streamed byte, and the CPU time each proxy's processes spent per
request (milliseconds; unlike wall time it holds steady on a machine busy with other work).
Figures only; nothing is asserted (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

#: the key every client sends (LiteLLM's proxy refuses to start without a master key: this one)
KEY = "sk-bench-" + "0123456789abcdef" * 3

UPSTREAM_APP = '''
import asyncio, json
ANSWER = json.dumps({"id": "c", "object": "chat.completion", "created": 0, "model": "bench",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
CHUNK = "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "bench",
    "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]}) + "\\n\\n"

async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    body = b""
    while True:
        m = await receive()
        body += m.get("body", b"")
        if not m.get("more_body"):
            break
    stream = b'"stream":true' in body or b'"stream": true' in body
    if not stream:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": ANSWER})
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for _ in range(20):
        await send({"type": "http.response.body", "body": CHUNK.encode(), "more_body": True})
    await send({"type": "http.response.body", "body": b"data: [DONE]\\n\\n"})
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"nothing listens on {port}")


def start_upstream(folder: Path) -> tuple[subprocess.Popen, str]:
    (folder / "upstream_app.py").write_text(UPSTREAM_APP)
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "upstream_app:app", "--port", str(port), "--log-level",
                             "warning", "--no-access-log"], cwd=folder)
    wait_port(port)
    return proc, f"http://127.0.0.1:{port}"


def start_ours(folder: Path, upstream: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "proxy", "--listen", f"127.0.0.1:{port}",
                             "--openai-url", upstream + "/v1", "--store", f"sqlite:{folder / 'store.db'}"],
                            stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc, f"http://127.0.0.1:{port}"


def start_litellm(binary: str, folder: Path, upstream: str) -> tuple[subprocess.Popen, str]:
    config = folder / "litellm.yaml"
    config.write_text(f"model_list:\n  - model_name: bench\n    litellm_params:\n      model: openai/bench\n"
                      f"      api_base: {upstream}/v1\n      api_key: x\n")
    port = free_port()
    env = {**os.environ, "LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False", "LITELLM_MASTER_KEY": KEY}
    proc = subprocess.Popen([binary, "--config", str(config), "--port", str(port), "--num_workers", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wait_port(port, 300)
    return proc, f"http://127.0.0.1:{port}"


def body_of(size: int, stream: bool = False) -> bytes:
    filler = "x" * max(size - 120, 0)
    return json.dumps({"model": "bench", "stream": stream,
                       "messages": [{"role": "user", "content": filler}]}).encode()


async def measure(base: str, body: bytes, requests: int, concurrency: int) -> list[float]:
    """Milliseconds per request (the whole answer read)."""
    times: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        headers = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
        for _ in range(5):  # warm the connections
            await client.post(base + "/v1/chat/completions", content=body, headers=headers)
        queue = list(range(requests))

        async def worker() -> None:
            while queue:
                queue.pop()
                start = time.perf_counter()
                answer = await client.post(base + "/v1/chat/completions", content=body, headers=headers)
                answer.read()
                times.append((time.perf_counter() - start) * 1000)
                assert answer.status_code == 200, answer.text[:200]

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return times


async def first_byte(base: str, requests: int) -> list[float]:
    times: list[float] = []
    async with httpx.AsyncClient(timeout=60) as client:
        body = body_of(2_000, stream=True)
        for i in range(requests + 5):
            start = time.perf_counter()
            async with client.stream("POST", base + "/v1/chat/completions", content=body,
                                     headers={"authorization": f"Bearer {KEY}", "content-type": "application/json"}) as answer:
                chunks = answer.aiter_raw()
                await chunks.__anext__()
                if i >= 5:
                    times.append((time.perf_counter() - start) * 1000)
                async for _ in chunks:
                    pass
    return times


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of process ``pid`` and its descendants (Linux ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = open(f"/proc/{entry}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(entry)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick)
    family = {pid}
    for child, (parent, _) in sorted(stats.items()):
        if parent in family:
            family.add(child)
    return sum(stats[p][1] for p in family if p in stats)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--litellm", default=shutil.which("litellm"), help="LiteLLM's `litellm` command")
    parser.add_argument("--only", default="2k,400k")
    args = parser.parse_args()
    sizes = {"2k": 2_000, "400k": 400_000}
    folder = Path(tempfile.mkdtemp())
    procs: list[subprocess.Popen] = []
    try:
        up, upstream = start_upstream(folder)
        procs.append(up)
        targets = {"direct": upstream}
        ours, targets["pipeline proxy"] = start_ours(folder, upstream)
        procs.append(ours)
        pids = {"pipeline proxy": ours.pid}
        if args.litellm:
            lite, targets["LiteLLM"] = start_litellm(args.litellm, folder, upstream)
            procs.append(lite)
            pids["LiteLLM"] = lite.pid
        print(f"{args.requests} requests per row; milliseconds; 'added' = p50 (p99) minus direct's")
        header = ["body", "conc", "direct p50", "direct p99"] + [f"{n} added p50 (p99)" for n in pids]
        print(" | ".join(header + [f"{n} CPU/request" for n in pids]))
        for name in args.only.split(","):
            for concurrency in (1, 16):
                body = body_of(sizes[name])
                got, cpu = {}, {}
                for n, url in targets.items():
                    before = cpu_seconds(pids[n]) if n in pids else 0.0
                    got[n] = asyncio.run(measure(url, body, args.requests, concurrency))
                    cpu[n] = (cpu_seconds(pids[n]) - before) * 1000 / (args.requests + 5) if n in pids else 0.0
                d50, d99 = pct(got["direct"], 0.5), pct(got["direct"], 0.99)
                cells = [name, str(concurrency), f"{d50:.2f}", f"{d99:.2f}"]
                cells += [f"{pct(got[n], 0.5) - d50:+.2f} ({pct(got[n], 0.99) - d99:+.2f})" for n in pids]
                print(" | ".join(cells + [f"{cpu[n]:.2f}" for n in pids]))
        ttfb = {n: asyncio.run(first_byte(url, args.requests // 2)) for n, url in targets.items()}
        d = statistics.median(ttfb["direct"])
        print("time to first streamed byte, median: direct " + f"{d:.2f}; " +
              "; ".join(f"{n} {statistics.median(v) - d:+.2f}" for n, v in ttfb.items() if n != "direct"))
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
