"""The instructions `pipeline proxy` executes per request, in user space, under callgrind.

    python benchmarks/proxy_instructions.py [--size 400000] [--requests 30] [--checkout PATH]

Wall and CPU times move by a millisecond between runs on a shared machine; an instruction
count does not. The proxy runs under `valgrind --tool=callgrind` with instrumentation off
while it starts and serves 10 warm-up requests, on for `--requests` more of `--size` bytes
(the same upstream and body as benchmarks/proxy.py), then the count is divided by the
requests. `--checkout` runs another checkout's `pipeline` (put first on PYTHONPATH), so two
commits are compared on one machine. The kernel's share (the sockets' copies) is not counted,
and valgrind's CPU has no SHA extensions, so libcrypto's SHA-256 counts several times what the
hardware runs: the libcrypto share is printed apart. Figures only (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from proxy import body_of, free_port, start_upstream, wait_port  # noqa: E402


def totals(profile: Path) -> tuple[int, int]:
    """All instructions of a callgrind output, and libcrypto's."""
    annotated = subprocess.run(["callgrind_annotate", "--threshold=100", str(profile)], capture_output=True,
                               text=True, check=True).stdout
    total = crypto = 0
    for line in annotated.splitlines():
        figure = line.strip().split(" ", 1)[0].replace(",", "")
        if not figure.isdigit():
            continue
        if "PROGRAM TOTALS" in line:
            total = int(figure)
        elif "libcrypto" in line:
            crypto += int(figure)
    return total, crypto


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=400_000)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--checkout", help="another checkout of the project to measure")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    env = dict(os.environ, PYTHONPATH=args.checkout or str(Path(__file__).parent.parent))
    upstream_proc, upstream = start_upstream(folder)
    port, out = free_port(), folder / "callgrind.out"
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
                             sys.executable, "-m", "pipeline", "proxy", "--listen", f"127.0.0.1:{port}",
                             "--openai-url", upstream + "/v1", "--store", f"sqlite:{folder / 'store.db'}"],
                            stderr=subprocess.DEVNULL, env=env, cwd=folder)  # not this checkout's by `-m`
    try:
        wait_port(port, 300)
        body = body_of(args.size)
        with httpx.Client(timeout=300) as client:
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            for count in (10, args.requests):
                if count == args.requests:
                    subprocess.run(["callgrind_control", "-i", "on", str(proc.pid)], check=True, capture_output=True)
                for _ in range(count):
                    assert client.post(url, content=body).status_code == 200
            subprocess.run(["callgrind_control", "-i", "off", str(proc.pid)], check=True, capture_output=True)
        proc.terminate()
        proc.wait(300)
        total, crypto = totals(out)
        per = lambda n: n / args.requests / 1e6  # noqa: E731
        print(f"{args.size} B, {args.requests} requests: {per(total):.2f} M instructions a request, "
              f"{per(crypto):.2f} M of them libcrypto's, {per(total - crypto):.2f} M the rest")
    finally:
        if proc.poll() is None:
            proc.kill()
        upstream_proc.terminate()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
