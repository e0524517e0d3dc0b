"""The scripted model server, :mod:`pipeline.loopback.chat`, under its old name (tests import it from here)."""

from pipeline.loopback.chat import (  # noqa: F401
    ANTHROPIC_PATH,
    OPENAI_PATH,
    LoopbackServer,
    ReceivedRequest,
    anthropic_error,
    error_status,
    normalize_reply,
    openai_error,
)

__all__ = ["LoopbackServer", "ReceivedRequest", "error_status", "normalize_reply"]
