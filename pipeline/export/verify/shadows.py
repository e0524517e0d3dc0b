"""What in the user's real environment adds to or overrides an export, found by looking at files.

``pipeline export TARGET --verify`` runs the agent with a throwaway home, so the user's own
settings do not change what it captures; this module names the files and variables of the
real environment that would, for that agent: instruction files in the project's parent
folders, user-level files in the real home, settings that take precedence over the
project's, variables that redirect the agent. It reads only file names, the few settings
keys that matter, and variable names; nothing is sent anywhere.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from pipeline.agentdir import AGENT_DIR_ENV, DEFAULT_AGENT_DIR, expand_home


@dataclass(frozen=True)
class Shadow:
    """A file or variable of the real environment and what it does to the export."""

    path: str
    what: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "what": self.what}


#: instruction files each agent reads from the folders above the project, as extra instructions
PARENT_FILES: dict[str, tuple[str, ...]] = {
    "pi": ("AGENTS.md", "CLAUDE.md"),
    "claude-code": ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"),
    "codex": ("AGENTS.override.md", "AGENTS.md"),
    "opencode": ("AGENTS.md", "CLAUDE.md"),
    "gemini": ("GEMINI.md",),
    "qwen-code": ("QWEN.md", "AGENTS.md"),
    "kilo": ("AGENTS.md", "CLAUDE.md"),
    "copilot": (),
    "agents-md": ("AGENTS.override.md", "AGENTS.md"),
}
_ADDS = "{agent} reads it as well as the project's instructions: it reaches the model beside the export"


def find_shadows(target: str, agent: str, root: Path, home: Path, environ: Mapping[str, str],
                 blocks: Sequence[str] = ()) -> list[Shadow]:
    """The shadows of an export of ``target`` into ``root``, for a user whose home is ``home``;
    ``blocks``: the files the export writes a marked block into, relative to ``root``."""
    found = [Shadow(str(p), _ADDS.format(agent=agent) + " (a parent folder's file)")
             for p in _parents(root, PARENT_FILES[target])]
    found += _USER[target](root, home, environ, agent)
    if target == "agents-md":
        found += _nested_overrides(root, blocks)
    return found


def _nested_overrides(root: Path, blocks: Sequence[str]) -> list[Shadow]:
    """A sub-folder's ``AGENTS.override.md`` beside an ``AGENTS.md`` the export writes a block into:
    Codex reads it in that folder in place of the ``AGENTS.md`` (the root's is :func:`_agents_md`'s)."""
    folders = sorted({Path(block).parent for block in blocks} - {Path(".")})
    return _files([(root / folder / "AGENTS.override.md",
                    f"Codex reads {folder.as_posix()}/AGENTS.override.md in place of that folder's AGENTS.md: the "
                    "export's block there does not reach Codex") for folder in folders])


def _parents(root: Path, names: tuple[str, ...]) -> list[Path]:
    out = []
    for folder in root.parents:
        out += [folder / n for n in names if (folder / n).is_file()]
    return out


def _files(pairs: list[tuple[Path, str]]) -> list[Shadow]:
    return [Shadow(str(path), what) for path, what in pairs if path.is_file()]


def _variables(environ: Mapping[str, str], names: Mapping[str, str]) -> list[Shadow]:
    return [Shadow(f"${name}", what) for name, what in names.items() if environ.get(name)]


def _pi(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    agent_dir = expand_home(environ.get(AGENT_DIR_ENV) or DEFAULT_AGENT_DIR, home)
    out = _files([
        (agent_dir / "SYSTEM.md", "pi's user-level custom prompt: the extension renders it where the profile "
                                  "places the custom prompt (a project .pi/SYSTEM.md wins over it)"),
        (agent_dir / "APPEND_SYSTEM.md", "appended to the prompt where the profile places the appended prompt"),
        (agent_dir / "AGENTS.md", "pi's user-level context file: it reaches the prompt as a context file"),
        (agent_dir / "CLAUDE.md", "pi's user-level context file: it reaches the prompt as a context file"),
    ])
    extensions = agent_dir / "extensions"
    if extensions.is_dir() and any(extensions.iterdir()):
        out.append(Shadow(str(extensions), "user-level pi extensions: one that sets the system prompt in "
                                           "before_agent_start runs beside the export's and can change it"))
    out += _variables(environ, {AGENT_DIR_ENV: "pi's agent directory is elsewhere than ~/.pi/agent"})
    return out


def _claude(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    config = Path(environ.get("CLAUDE_CONFIG_DIR") or home / ".claude").expanduser()
    out = _files([
        (config / "CLAUDE.md", "Claude Code's user-level memory: it reaches every session beside the export"),
        (root / "CLAUDE.local.md", "the project's local memory (not checked in): it reaches the model beside the "
                                   "export"),
        (Path("/etc/claude-code/managed-settings.json"), "managed settings: they override the project's settings"),
    ])
    local = root / ".claude" / "settings.local.json"
    keys = _json_keys(local)
    if keys:
        out.append(Shadow(str(local), "local settings override the project's .claude/settings.json; it sets "
                                      + ", ".join(keys)))
    out += _variables(environ, {"CLAUDE_CONFIG_DIR": "Claude Code's user folder is elsewhere than ~/.claude"})
    return out


def _codex(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    codex_home = Path(environ.get("CODEX_HOME") or home / ".codex").expanduser()
    out = _files([
        (codex_home / "AGENTS.override.md", "Codex's user-level instructions (they replace ~/.codex/AGENTS.md)"),
        (codex_home / "AGENTS.md", "Codex's user-level instructions: they reach every session beside the export"),
    ])
    config = codex_home / "config.toml"
    if not _codex_trusts(config, root):
        out.append(Shadow(str(config), f"it does not trust {root}: Codex reads the project's .codex/config.toml "
                                       "(the export's keys) only in a trusted project, so it ignores them here "
                                       "(the verification's own run trusts the project)"))
    out += _variables(environ, {"CODEX_HOME": "Codex's home is elsewhere than ~/.codex"})
    return out


def _codex_trusts(config: Path, root: Path) -> bool:
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for table in (f'[projects.{json.dumps(str(root))}]', f"[projects.'{root}']"):
        at = text.find(table)
        if at >= 0:
            body = text[at + len(table):].split("\n[", 1)[0]
            if re.search(r'^\s*trust_level\s*=\s*"trusted"', body, re.M):
                return True
    return False


def _opencode(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config").expanduser() / "opencode"
    out = _files([
        (config / "AGENTS.md", "opencode's user-level rules: they reach every session beside the export"),
        (home / ".claude" / "CLAUDE.md", "opencode reads Claude Code's user memory when it has no user-level "
                                         "AGENTS.md (unless OPENCODE_DISABLE_CLAUDE_CODE is set)"),
    ])
    out += _variables(environ, {
        "OPENCODE_CONFIG_CONTENT": "configuration given in the environment: it overrides the project's opencode.json",
        "OPENCODE_CONFIG": "another configuration file, merged over the user's",
    })
    return out


def _gemini(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    out = _files([(home / ".gemini" / "GEMINI.md",
                   "Gemini CLI's user-level memory: it reaches every session beside the export")])
    out += _variables(environ, {
        "GEMINI_SYSTEM_MD": "set in the environment, it wins over the export's .gemini/.env (Gemini CLI does not "
                            "override a variable that is set)",
        "GEMINI_CLI_SYSTEM_SETTINGS_PATH": "system settings that override the project's .gemini/settings.json",
    })
    return out


def _qwen(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    out = _files([
        (home / ".qwen" / "QWEN.md", "Qwen Code's user-level memory: it reaches every session beside the export"),
        (home / ".qwen" / "AGENTS.md", "Qwen Code's user-level instructions: they reach every session beside the "
                                       "export"),
        (home / ".qwen" / "system.md", "Qwen Code's user-level system.md (used when QWEN_SYSTEM_MD names it)"),
    ])
    return out + _variables(environ, {
        "QWEN_SYSTEM_MD": "set in the environment, it wins over the project's .qwen/.env",
        "OPENAI_BASE_URL": "Qwen Code sends to that server"})


def _kilo(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    config = Path(environ.get("XDG_CONFIG_HOME") or home / ".config").expanduser() / "kilo"
    out = _files([(config / "kilo.json", "Kilo CLI's user config: merged with the project's kilo.json"),
                  (config / "AGENTS.md", "Kilo CLI's user-level instructions: they reach every session beside the "
                                         "export"),
                  (root / "opencode.json", "Kilo CLI reads opencode's config too: merged with kilo.json")])
    return out + _variables(environ, {
        "KILO_CONFIG": "a config file of its own merged over the project's",
        "KILO_CONFIG_CONTENT": "config text merged over the project's",
        "KILO_DISABLE_PROJECT_CONFIG": "the project's kilo.json and .kilo/ are not read"})


def _copilot(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    copilot_home = Path(environ.get("COPILOT_HOME") or home / ".copilot").expanduser()
    out = _files([(copilot_home / "copilot-instructions.md", "Copilot CLI's user-level instructions: they reach "
                                                             "every session beside the export"),
                  (root / ".github" / "copilot-instructions.md", "the project's own instructions: Copilot CLI sends "
                                                                 "them beside the export's file")])
    instructions = copilot_home / "instructions"
    if instructions.is_dir() and any(instructions.glob("**/*.instructions.md")):
        out.append(Shadow(str(instructions), "user-level instruction files: Copilot CLI sends them beside the export"))
    return out + _variables(environ, {
        "COPILOT_CUSTOM_INSTRUCTIONS_DIRS": "more instruction folders Copilot CLI reads",
        "COPILOT_HOME": "Copilot CLI's home is elsewhere than ~/.copilot"})


def _agents_md(root: Path, home: Path, environ: Mapping[str, str], agent: str) -> list[Shadow]:
    """What changes the AGENTS.md --verify runs Codex on (the readers' own user-level files are theirs)."""
    codex_home = Path(environ.get("CODEX_HOME") or home / ".codex").expanduser()
    return _files([
        (root / "AGENTS.override.md", "Codex reads the project's AGENTS.override.md in place of its AGENTS.md: "
                                      "the export's block does not reach Codex"),
        (codex_home / "AGENTS.md", "Codex's user-level instructions: they reach every session beside AGENTS.md"),
        (codex_home / "AGENTS.override.md", "Codex's user-level instructions (they replace ~/.codex/AGENTS.md)"),
    ])


def _json_keys(path: Path) -> list[str]:
    """The top-level keys of a JSON object file (none when it is missing or not an object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return sorted(data) if isinstance(data, dict) else []


_USER: dict[str, Callable[[Path, Path, Mapping[str, str], str], list[Shadow]]] = {
    "pi": _pi, "claude-code": _claude, "codex": _codex, "opencode": _opencode, "gemini": _gemini,
    "qwen-code": _qwen, "kilo": _kilo, "copilot": _copilot,
    "agents-md": _agents_md}

__all__ = ["PARENT_FILES", "Shadow", "find_shadows"]
