"""Scripted model servers on 127.0.0.1, one per wire format the coding agents speak.

* :mod:`.chat`: OpenAI chat completions and Anthropic messages (:class:`~.chat.LoopbackServer`);
* :mod:`.responses`: the OpenAI Responses API Codex CLI speaks (:class:`~.responses.ResponsesLoopbackServer`);
* :mod:`.gemini`: the Gemini API Gemini CLI speaks (:class:`~.gemini.GeminiLoopbackServer`).

Each answers from a script of replies and records every request it receives. The test
suite drives clients and real agent CLIs against them, and ``pipeline export --verify``
captures what an installed agent sends. Only the standard library: they sit in the shared
ground so the review tooling (``pipeline.testing``) and the export both use them;
``pipeline.testing.loopback*`` re-export them under their old names.
"""
