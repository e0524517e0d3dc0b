"""Generate ``settings.json``: pi 1.6.0's settings defaults, as its own code holds and resolves them.

Needs the pi 1.6.0 oracle, set up (``$PI16_ORACLE``, see ``pi16_oracle.py``); the tests that
read the file do not. What it records:

* ``settings_defaults``: ``SETTINGS_DEFAULTS`` (``core/settings-defaults.js``, every
  settings.json default, interface ones included), from the oracle's ``constants`` op;
* ``settings_manager``: the oracle's ``settingsDefaults`` (what ``SettingsManager``'s
  compaction, branch-summary and retry getters return on empty settings);
* ``default_compaction_settings``: ``DEFAULT_COMPACTION_SETTINGS`` (the compaction module's);
* ``resolved``: ``SettingsManager.getCompactionSettings(model)`` on empty settings, without a
  model and for models of several providers: what pi uses when nothing is configured (pi
  ships no ``modelOverrides``: every model gets the plain defaults);
* ``estimates``: ``estimateTokens`` of a text and of an image message (chars per token and
  characters charged per image, pi's code constants).

No pi sentence is kept (the constants' prompt texts are dropped). Re-running gives a
byte-identical file.

    python tests/data/pi16/gen_settings_vectors.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pi16_oracle import HERE, Oracle, write_json  # noqa: E402

MODELS = [
    None,
    {"provider": "anthropic", "id": "claude-sonnet-4-5"},
    {"provider": "anthropic", "id": "claude-opus-4-7"},
    {"provider": "openai", "id": "gpt-5"},
    {"provider": "openai-codex", "id": "gpt-5.1-codex"},
    {"provider": "google", "id": "gemini-2.5-pro"},
    {"provider": "ollama", "id": "qwen3-coder:30b"},
    {"provider": "openrouter", "id": "z-ai/glm-4.6"},
]
TEXT_CHARS = 401


def main() -> int:
    oracle = Oracle()
    constants = oracle.one({"op": "constants"})
    resolved_requests = [{"op": "compaction_settings", "settings": {}, **({"model": m} if m else {})} for m in MODELS]
    resolved = oracle.results(resolved_requests)
    text = {"role": "user", "content": "x" * TEXT_CHARS, "timestamp": 1}
    image = {"role": "user", "content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}],
             "timestamp": 2}
    estimates = [
        {"message": "text", "chars": TEXT_CHARS, "tokens": oracle.one({"op": "estimate_tokens", "messages": [text]})},
        {"message": "image", "chars": 0, "tokens": oracle.one({"op": "estimate_tokens", "messages": [image]})},
    ]
    version = oracle.one({"op": "version"})
    oracle.close()
    doc = {
        "pi_version": version["piCodingAgent"],
        "generator": "tests/data/pi16/gen_settings_vectors.py",
        "settings_defaults": constants["SETTINGS_DEFAULTS"],
        "settings_manager": constants["settingsDefaults"],
        "default_compaction_settings": constants["DEFAULT_COMPACTION_SETTINGS"],
        "resolved": [{"model": m, "pi16": r} for m, r in zip(MODELS, resolved)],
        "estimates": estimates,
    }
    write_json(HERE / "settings.json", doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
