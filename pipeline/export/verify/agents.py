"""How each agent CLI runs headless against a loopback capture server (no network, no key).

One :class:`Recipe` per export target: the CLI's usual name on PATH, the wire server it
speaks (:mod:`pipeline.loopback`), the throwaway home or config folder that points it at
that server and keeps the user's own settings out, the command line of one prompt, and
where in the captured requests the system prompt and a command's expanded text are.
``tests/agents/`` runs the real CLIs through these same recipes.

* **pi** (``pi -p --mode json -a --no-session --offline --model loop/m MSG...``):
  ``PI_CODING_AGENT_DIR`` a fresh agent directory whose ``models.json`` declares the
  loopback provider (OpenAI chat completions); every message is a turn of one run, so the
  prompt and every command take one run.
* **Claude Code** (``claude -p MSG --output-format json``): ``ANTHROPIC_BASE_URL`` at the
  Anthropic messages route, a placeholder key, auto-updates and other traffic off.
* **Codex CLI** (``codex exec --skip-git-repo-check MSG``): ``CODEX_HOME/config.toml``
  declares the loopback provider (``wire_api = "responses"``) and trusts the project (Codex
  reads a project's ``.codex/config.toml`` only then).
* **Qwen Code** (``qwen -p MSG``): ``OPENAI_BASE_URL``/``OPENAI_API_KEY``/``OPENAI_MODEL`` at
  the loopback chat-completions server; the throwaway home's ``.qwen/settings.json`` turns its
  managed-memory side request off. A command's text is the user message's part that is not a
  ``<system-reminder>``.
* **Kilo CLI** (``kilo run MSG``, ``kilo run --command NAME ARGS``): opencode's provider
  (``@ai-sdk/openai-compatible``, bundled in Kilo) in the XDG config folder's
  ``kilo/kilo.json``, ``KILO_DISABLE_MODELS_FETCH``; a command's text is the user message
  without its ``<environment_details>`` part.
* **GitHub Copilot CLI** (``copilot -p MSG --allow-all-tools``): BYOK through
  ``COPILOT_PROVIDER_BASE_URL``/``COPILOT_PROVIDER_API_KEY``/``COPILOT_MODEL``,
  ``COPILOT_OFFLINE`` (no GitHub account), a throwaway ``COPILOT_HOME``; the package it
  unpacks on its first run stays in ``COPILOT_CACHE_HOME`` (default the user's cache).
* **AGENTS.md** (``agents-md``): Codex CLI as above; it sends the project's ``AGENTS.md``
  (the user's text and the export's block) as a user input item.
* **opencode** (``opencode run MSG``, ``opencode run --command NAME ARGS``): the XDG config
  folder's ``opencode.json`` declares the provider (``@ai-sdk/openai-compatible``, which
  opencode installs from npm into its cache on first use); ``PWD`` is the project (opencode
  takes its directory from it); its title request is answered aside.
* **Gemini CLI** (``gemini -p MSG -m gemini-2.5-flash``): ``GOOGLE_GEMINI_BASE_URL`` at the
  Gemini loopback server, the API-key auth selected in the throwaway home's settings, the
  workspace trusted (headless runs refuse untrusted folders).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from pipeline.agentdir import AGENT_DIR_ENV
from pipeline.loopback.chat import LoopbackServer
from pipeline.loopback.gemini import GeminiLoopbackServer
from pipeline.loopback.responses import ResponsesLoopbackServer

Body = Mapping[str, Any]

#: the environment variables a run keeps from the caller's (everything else, keys and
#: settings folders included, is left out or set by the recipe)
KEPT_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TMPDIR", "SYSTEMROOT", "COMSPEC", "PATHEXT")
#: pi's own tools (what pi hands its extension when no --tools flag narrows them)
PI_TOOLS = ("read", "bash", "edit", "write")


@dataclass(frozen=True)
class Invocation:
    """One thing typed to the agent: a plain prompt, or ``/name args``."""

    text: str
    command: str | None = None
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finished:
    """A CLI run: its exit status, its output tails and the agent's requests the server captured."""

    argv: tuple[str, ...]
    returncode: int | None  # None: killed at the time limit
    stdout: str
    stderr: str
    bodies: tuple[Body, ...]


class Recipe:
    """A CLI's headless run against its loopback server; subclasses fill in the agent's ways."""

    target = ""
    binary = ""
    #: every invocation of a verification in one run (pi takes several messages)
    batches = False

    def server(self) -> Any:
        return LoopbackServer(["ok"])

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        """Write the throwaway configuration under ``home``; the variables the run needs."""
        raise NotImplementedError

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        raise NotImplementedError

    def bodies(self, server: Any) -> list[Body]:
        return [b for b in server.bodies if isinstance(b, dict) and "messages" in b]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        """The text the agent sent for ``invocation`` (the ``index``-th of its run)."""
        raise NotImplementedError

    def agent_dir(self, home: Path) -> Path | None:
        """pi's agent directory inside the throwaway home (None: not pi)."""
        return None

    def run(self, binary: str, project: Path, home: Path, invocations: Sequence[Invocation], timeout: float,
            base_env: Mapping[str, str]) -> Finished:
        """Run the CLI once for ``invocations`` in ``project``; the server captures what it sends."""
        home.mkdir(parents=True, exist_ok=True)
        with self.server() as server:
            env = {k: v for k, v in base_env.items() if k in KEPT_ENV}
            env.update(HOME=str(home), USERPROFILE=str(home), NO_PROXY="127.0.0.1,localhost",
                       no_proxy="127.0.0.1,localhost")
            env.update(self.configure(home, server, project))
            argv = self.argv(binary, invocations)
            code, out, err = run_process(argv, project, env, timeout)
            bodies = self.bodies(server)
        return Finished(tuple(argv), code, out[-4000:], err[-4000:], tuple(bodies))


def run_process(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int | None, str, str]:
    """The process and everything it starts are ended at ``timeout`` (its own process group)."""
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out, err
    except subprocess.TimeoutExpired:
        _kill_group(process)
        out, err = process.communicate()
        return None, out, err
    finally:
        if process.poll() is None:
            _kill_group(process)
            process.wait()


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, AttributeError):
        process.kill()


def texts(content: Any) -> list[str]:
    """The text parts of a message's content (a string, or a list of typed blocks)."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return []


def _last_user(body: Body) -> str | None:
    parts = _last_user_parts(body)
    return "".join(parts) if parts is not None else None


def _last_user_parts(body: Body, *, but: str | None = None) -> list[str] | None:
    """The text parts of an OpenAI chat body's last user message (``None``: it has none), leaving out
    the parts that start with ``but`` (an agent's own addition, such as ``<system-reminder>``)."""
    users = [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return None
    return [t for t in texts(users[-1].get("content")) if but is None or not t.lstrip().startswith(but)]


# --------------------------------------------------------------------------- pi


class PiRecipe(Recipe):
    target = "pi"
    binary = "pi"
    batches = True

    def agent_dir(self, home: Path) -> Path:
        return home / "pi-agent"

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        agent = self.agent_dir(home)
        agent.mkdir(parents=True, exist_ok=True)
        (agent / "models.json").write_text(json.dumps({"providers": {"loop": {
            "baseUrl": server.openai_base_url, "api": "openai-completions", "apiKey": "loopback",
            "models": [{"id": "m", "contextWindow": 128000, "maxTokens": 1024}]}}}))
        return {AGENT_DIR_ENV: str(agent)}

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        return [binary, "-p", "--mode", "json", "-a", "--no-session", "--offline", "--model", "loop/m",
                *(i.text for i in invocations)]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        return _last_user(bodies[index]) if index < len(bodies) else None


def system_message(body: Body) -> str | None:
    """An OpenAI chat body's leading system (or developer) message."""
    messages = body.get("messages") or []
    if not messages or not isinstance(messages[0], dict) or messages[0].get("role") not in ("system", "developer"):
        return None
    return "".join(texts(messages[0].get("content")))


# --------------------------------------------------------------------------- Claude Code


class ClaudeCodeRecipe(Recipe):
    target = "claude-code"
    binary = "claude"

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        return {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "sk-loopback",
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        return [binary, "-p", invocations[0].text, "--output-format", "json"]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        marker = f"<command-name>/{invocation.command}</command-name>"
        for body in bodies:
            for message in body.get("messages") or []:
                parts = texts(message.get("content"))
                for i, text in enumerate(parts):
                    if marker in text and i + 1 < len(parts):
                        return parts[i + 1]
        return None


# --------------------------------------------------------------------------- Codex CLI


class CodexRecipe(Recipe):
    target = "codex"
    binary = "codex"

    def server(self) -> Any:
        return ResponsesLoopbackServer(["ok"], max_requests=12)

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            codex_config(server.base_url) + f'\n[projects.{json.dumps(str(project))}]\ntrust_level = "trusted"\n')
        return {"CODEX_HOME": str(codex_home), "LOOP_KEY": "loopback", "XDG_CONFIG_HOME": str(home / ".config")}

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        return [binary, "exec", "--skip-git-repo-check", invocations[0].text]

    def bodies(self, server: Any) -> list[Body]:
        return [b for b in server.bodies if isinstance(b, dict) and "input" in b]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        users = [t for item in bodies[0].get("input") or [] if isinstance(item, dict)
                 and item.get("type") == "message" and item.get("role") == "user" for t in texts(item.get("content"))]
        return users[-1] if bodies and users else None


def codex_config(base_url: str, extra: str = "") -> str:
    """A Codex ``config.toml`` whose model is served by the loopback Responses server at ``base_url``."""
    return (f'model = "m"\nmodel_provider = "loop"\n{extra}\n[model_providers.loop]\nname = "loop"\n'
            f'base_url = "{base_url}"\nwire_api = "responses"\nenv_key = "LOOP_KEY"\n')


class AgentsMdRecipe(CodexRecipe):
    """An AGENTS.md export is verified on Codex CLI, which sends the file whole."""

    target = "agents-md"


# --------------------------------------------------------------------------- opencode


class OpencodeRecipe(Recipe):
    target = "opencode"
    binary = "opencode"

    def __init__(self, cache: str | None = None, model: Mapping[str, Any] | None = None) -> None:
        self.cache = cache
        self.model = dict(model or {})

    def server(self) -> Any:
        return LoopbackServer(["ok"], aside=opencode_title)

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        config = home / ".config" / "opencode"
        config.mkdir(parents=True, exist_ok=True)
        path = config / "opencode.json"
        user = json.loads(path.read_text()) if path.is_file() else {}
        path.write_text(json.dumps({**user, **opencode_provider(server.openai_base_url, self.model)}))
        cache = self.cache or os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return {"XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": cache, "PWD": str(project)}

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        first = invocations[0]
        if first.command is not None:
            return [binary, "run", "--command", first.command, *first.args]
        return [binary, "run", first.text]

    def bodies(self, server: Any) -> list[Body]:
        return [b for b in super().bodies(server) if not opencode_is_title(b)]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        return _last_user(bodies[0]) if bodies else None


def opencode_provider(base_url: str, model: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The ``opencode.json`` keys that make the loopback server opencode's model ``loop/m``."""
    return {"provider": {"loop": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": base_url, "apiKey": "x"},
                                  "models": {"m": dict(model or {})}}},
            "model": "loop/m", "share": "disabled", "autoupdate": False}


def opencode_is_title(body: Body) -> bool:
    """opencode's title request (sent beside the agent's first one, in either order)."""
    messages = body.get("messages") or []
    return bool(messages) and "title generator" in "".join(texts(messages[0].get("content")))


def opencode_title(body: Any) -> str | None:
    """The server's answer to opencode's title request, taken aside from the script."""
    return "A title" if isinstance(body, dict) and "messages" in body and opencode_is_title(body) else None


# --------------------------------------------------------------------------- Gemini CLI


class GeminiRecipe(Recipe):
    target = "gemini"
    binary = "gemini"

    def server(self) -> Any:
        return GeminiLoopbackServer(["ok"], max_requests=10)

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        settings = home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        from pipeline.llm.providers import PROVIDERS

        return {PROVIDERS["gemini"].key_env: "loopback", "GOOGLE_GEMINI_BASE_URL": server.url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true"}

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        return [binary, "-p", invocations[0].text, "-m", "gemini-2.5-flash"]

    def bodies(self, server: Any) -> list[Body]:
        return [b for b in server.bodies if isinstance(b, dict)]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        contents = bodies[0].get("contents") or [] if bodies else []
        parts = [p["text"] for p in (contents[-1].get("parts") or []) if "text" in p] if contents else []
        return parts[-1] if parts else None


# --------------------------------------------------------------------------- Qwen Code


class QwenCodeRecipe(Recipe):
    target = "qwen-code"
    binary = "qwen"

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        settings = home / ".qwen" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        # its managed-memory side request after each run is turned off: one request per run
        settings.write_text(json.dumps({"memory": {"enableManagedAutoMemory": False,
                                                   "enableManagedAutoDream": False}}))
        from pipeline.llm.providers import PROVIDERS

        # Qwen Code reads OpenAI's own variables (the key's name is the provider table's)
        return {PROVIDERS["openai"].key_env: "loopback", "OPENAI_BASE_URL": server.openai_base_url,
                "OPENAI_MODEL": "m"}

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        return [binary, "-p", invocations[0].text]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        """The expanded command: the part of the last user message that is not a ``<system-reminder>``."""
        parts = _last_user_parts(bodies[0], but="<system-reminder>") if bodies else None
        return parts[-1] if parts else None


# --------------------------------------------------------------------------- Kilo CLI


class KiloRecipe(Recipe):
    target = "kilo"
    binary = "kilo"

    def __init__(self, model: Mapping[str, Any] | None = None) -> None:
        self.model = dict(model or {})

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        config = home / ".config" / "kilo"
        config.mkdir(parents=True, exist_ok=True)
        (config / "kilo.json").write_text(json.dumps(opencode_provider(server.openai_base_url, self.model)))
        return {"XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_STATE_HOME": str(home / ".local/state"), "XDG_CACHE_HOME": str(home / ".cache"),
                "PWD": str(project), "KILO_DISABLE_MODELS_FETCH": "1"}

    argv = OpencodeRecipe.argv

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        """The expanded command: the last user message without its ``<environment_details>`` part."""
        parts = _last_user_parts(bodies[0], but="<environment_details>") if bodies else None
        return "".join(parts) if parts else None


# --------------------------------------------------------------------------- GitHub Copilot CLI


class CopilotRecipe(Recipe):
    target = "copilot"
    binary = "copilot"

    def configure(self, home: Path, server: Any, project: Path) -> dict[str, str]:
        # the package Copilot unpacks on its first run (about 235 MB) stays in the user's cache
        cache = os.environ.get("COPILOT_CACHE_HOME") or str(
            Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "copilot")
        return {"COPILOT_PROVIDER_BASE_URL": server.openai_base_url, "COPILOT_PROVIDER_API_KEY": "loopback",
                "COPILOT_MODEL": "m", "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
                "COPILOT_HOME": str(home / ".copilot"), "COPILOT_CACHE_HOME": cache}

    def argv(self, binary: str, invocations: Sequence[Invocation]) -> list[str]:
        return [binary, "-p", invocations[0].text, "--allow-all-tools"]

    def command_text(self, bodies: Sequence[Body], index: int, invocation: Invocation) -> str | None:
        return _last_user(bodies[0]) if bodies else None


RECIPES: dict[str, Callable[[], Recipe]] = {"pi": PiRecipe, "claude-code": ClaudeCodeRecipe, "codex": CodexRecipe,
                                            "opencode": OpencodeRecipe, "gemini": GeminiRecipe,
                                            "qwen-code": QwenCodeRecipe, "kilo": KiloRecipe, "copilot": CopilotRecipe,
                                            "agents-md": AgentsMdRecipe}


def string_leaves(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a request body with its path (``messages[0].content[1].text``); tool
    definitions are left out (their descriptions are the agent's, not the prompt)."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in ("tools", "functionDeclarations"):
                continue
            yield from string_leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from string_leaves(item, f"{path}[{i}]")


__all__ = ["Finished", "Invocation", "KEPT_ENV", "PI_TOOLS", "RECIPES", "Recipe", "codex_config", "opencode_provider",
           "opencode_title", "run_process", "string_leaves", "system_message", "texts"]
