"""The scripted Gemini API server, :mod:`pipeline.loopback.gemini`, under its old name."""

from pipeline.loopback.gemini import GeminiLoopbackServer, gemini_response

__all__ = ["GeminiLoopbackServer", "gemini_response"]
