"""The scripted Responses API server, :mod:`pipeline.loopback.responses`, under its old name."""

from pipeline.loopback.responses import RESPONSES_PATH, ResponsesLoopbackServer, response_events, response_object

__all__ = ["RESPONSES_PATH", "ResponsesLoopbackServer", "response_events", "response_object"]
