"""Agent-turn requests over HTTP: a provider body in, pi's assistant message out.

:class:`ChatClient` POSTs a wire body built by the wire layer (:mod:`pipeline.llm.wire.chat` for
OpenAI chat completions, :mod:`pipeline.llm.wire.anthropic` for Anthropic messages) with the key, URL and timeouts of the summary
clients (:mod:`pipeline.llm.http`), streams the answer (server-sent events) and builds
pi's assistant message from it with the converters. It never raises for what a
provider can do: an HTTP error, a connection failure, a timeout or an unreadable
answer becomes a reply with ``stopReason: "error"`` and a one-line ``errorMessage``
(the runtime classifies it: overflow, transient, permanent); an answer over the
client's ``limits.max_response_bytes`` is an error too, never read further, and so is an
answer not complete within ``limits.call_deadline`` seconds (a transient error); a cancelled request
becomes ``stopReason: "aborted"`` carrying what had arrived. Keys never reach a message.

The stream is read in a worker thread, so cancelling never waits on a blocked socket.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from typing import Any, Callable, Iterator, Mapping, Optional

from pipeline.js import js_json
from pipeline.llm.wire import anthropic, chat, sse
from pipeline.llm.wire.reply import error_message, error_reply
from pipeline.llm.wire.types import TargetModel
from pipeline.llm.errors import LLMError, one_line, redact
from pipeline.llm.factory import CLIENTS, _check_env_name

_DONE = object()



class ChatClient:
    """Sends agent requests to ``wire`` (``openai``/``anthropic``) at ``base_url``.

    ``clock`` gives the reply timestamp (epoch ms); ``aborted_text`` is the
    ``errorMessage`` of a cancelled reply (the profile's ``runtime.aborted``).
    """

    def __init__(self, wire: str, *, model: TargetModel, aborted_text: str, base_url: Optional[str] = None,
                 api_key_env: Optional[str] = None, timeout: float = 600.0, env: Optional[Mapping[str, str]] = None,
                 clock: Callable[[], float] = lambda: float(int(time.time() * 1000)), **options: Any) -> None:
        if wire not in CLIENTS:
            raise ValueError(f"unknown wire format {wire!r}; expected one of {', '.join(CLIENTS)}")
        if api_key_env is not None:
            _check_env_name(api_key_env)  # a key given as the name is refused, never shown
        self.wire, self.model, self.aborted_text, self.clock = wire, model, aborted_text, clock
        self._http = CLIENTS[wire](model=model.id, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                                   env=env, **options)

    def __repr__(self) -> str:
        return f"ChatClient({self.wire!r}, url={self._http.shown_url!r}, api_key_env={self._http.api_key_env!r})"

    @property
    def url(self) -> str:
        return self._http.url

    def check_ready(self) -> None:
        """Raise the error a request would raise for a missing key (sends nothing)."""
        self._http._api_key()

    def close(self) -> None:
        self._http.close()

    # ----------------------------------------------------------------- sending

    #: :meth:`send` takes ``on_text`` (the agent loop shows text as it streams)
    streams_text = True

    def send(self, body: Mapping[str, Any], *, cancel: Optional[threading.Event] = None,
             on_text: Optional[Callable[[str], None]] = None) -> dict[str, Any]:
        """POST ``body`` and return pi's assistant message (see the module docstring);
        ``on_text`` is called with each piece of answer text as it arrives."""
        key = self._http._api_key()
        payload = js_json(dict(body)).encode("utf-8")
        stream = body.get("stream") is True
        lines: "queue.Queue[Any]" = queue.Queue()
        worker = threading.Thread(target=self._worker, args=(payload, key, stream, lines), daemon=True)
        worker.start()
        status: Optional[int] = None
        frames: list[Any] = []
        deadline = time.monotonic() + self._http.limits.call_deadline
        while True:
            try:
                item = lines.get(timeout=0.05)
            except queue.Empty:
                if cancel is not None and cancel.is_set():
                    return self._aborted(frames, stream)
                if time.monotonic() > deadline:
                    return self._failed(f"{self.wire}: timed out: no complete answer within "
                                        f"{self._http.limits.call_deadline:g}s from {self._http.shown_url}")
                continue
            if item is _DONE:
                break
            kind, value = item
            if kind == "status":
                status = value
            elif kind == "frame":
                frames.append(value)
                text = self._format.text_delta(value) if on_text is not None else None
                if text and on_text is not None:
                    on_text(text)
            elif kind == "error":
                return self._failed(value)
            elif kind == "body":
                return self._complete(status or 0, value, key, stream)
            if cancel is not None and cancel.is_set():
                return self._aborted(frames, stream)
        return self._streamed(frames)

    def _worker(self, payload: bytes, key: str, stream: bool, out: "queue.Queue[Any]") -> None:
        try:
            client = self._http._client()
            import httpx

            timeout = httpx.Timeout(self._http.timeout, connect=min(self._http.timeout, 10.0))
            cap = self._http.limits.max_response_bytes
            with client.stream("POST", self.url, content=payload, headers=self._http._headers(key),
                               timeout=timeout) as response:
                out.put(("status", response.status_code))
                if response.status_code != 200 or not stream:
                    out.put(("body", _read_bounded(response, cap)))
                    return
                for frame in sse.frames(_bounded_lines(response.iter_lines(), cap)):
                    out.put(("frame", frame))
        except LLMError as err:
            out.put(("error", err.message))
        except _TooLarge:
            out.put(("error", f"{self.wire}: malformed response: the answer is larger than {self._http.limits.max_response_bytes} bytes"))
        except Exception as err:  # httpx transport errors: a reply with the reason, key redacted
            out.put(("error", self._transport_text(err, key)))
        finally:
            out.put(_DONE)

    def _transport_text(self, err: Exception, key: str) -> str:
        import httpx

        name = type(err).__name__
        if isinstance(err, httpx.TimeoutException):
            return f"{self.wire}: timed out after {self._http.timeout:g}s waiting for {self._http.shown_url} ({name})"
        detail = one_line(redact(str(err), key)) or name
        return f"{self.wire}: connection error to {self._http.shown_url}: {detail}"

    # ----------------------------------------------------------------- building replies

    def _now(self) -> int | float:
        value = self.clock()
        return int(value) if float(value).is_integer() else value

    def _failed(self, message: str) -> dict[str, Any]:
        return error_reply(message, model=self.model, timestamp=self._now())

    def _complete(self, status: int, body: bytes, key: str, stream: bool) -> dict[str, Any]:
        if status != 200:
            return self._failed(redact(error_message(self.wire, status, body), key))
        if stream:  # a 200 answer that is not an event stream
            return self._streamed(list(sse.frames(body.decode("utf-8", "replace").splitlines())))
        try:
            data = json.loads(body)
        except ValueError:
            return self._failed(f"{self.wire}: malformed response: {one_line(redact(body.decode('utf-8', 'replace'), key), 120)}")
        if not isinstance(data, dict):
            return self._failed(f"{self.wire}: malformed response: expected a JSON object")
        convert = chat.from_openai_chat if self.wire == "openai" else anthropic.from_anthropic_messages
        return self._guarded(lambda: convert(data, model=self.model, timestamp=self._now()))

    def _streamed(self, frames: list[Any]) -> dict[str, Any]:
        bad = next((f for f in frames if not isinstance(f, dict)), None)
        if bad is not None:
            return self._failed(f"{self.wire}: malformed response: an event that is not a JSON object: "
                                f"{one_line(str(bad[-1] if isinstance(bad, tuple) else bad), 80)}")
        events = frames
        if not events:
            return self._failed(f"{self.wire}: malformed response: the stream carried no events")
        if self.wire == "anthropic":
            error = next((e for e in events if e.get("type") == "error"), None)
            if error is not None:
                return self._failed(f"{self.wire}: {js_json(error.get('error'))}")
        convert = self._format_stream
        return self._guarded(lambda: convert(events, model=self.model, timestamp=self._now()))

    @property
    def _format(self) -> Any:
        """The wire module of this client's format."""
        return chat if self.wire == "openai" else anthropic

    def _format_stream(self, events: list[Any], *, model: TargetModel, timestamp: int | float) -> dict[str, Any]:
        if self.wire == "openai":
            return chat.from_openai_stream(events, model=model, timestamp=timestamp)
        return anthropic.from_anthropic_stream(events, model=model, timestamp=timestamp)

    def _guarded(self, build: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return build()
        except (AttributeError, TypeError, KeyError, IndexError, ValueError) as err:
            return self._failed(f"{self.wire}: malformed response ({type(err).__name__}: {one_line(str(err), 120)})")

    def _aborted(self, frames: list[Any], stream: bool) -> dict[str, Any]:
        partial = None
        events = [f for f in frames if isinstance(f, dict)]
        if events:
            convert = self._format_stream
            try:
                partial = convert(events, model=self.model, timestamp=self._now())
            except Exception:
                partial = None
            if partial is not None:
                partial.pop("rawStopReason", None)
                partial.pop("errorMessage", None)
        return error_reply(self.aborted_text, model=self.model, timestamp=self._now(), aborted=True, partial=partial)


def _read_bounded(response: Any, cap: int) -> bytes:
    data = bytearray()
    for chunk in response.iter_bytes():
        data += chunk
        if len(data) > cap:
            raise _TooLarge()
    return bytes(data)


class _TooLarge(Exception):
    pass


def _bounded_lines(lines: Iterator[str], cap: int) -> Iterator[str]:
    size = 0
    for line in lines:
        size += len(line) + 1
        if size > cap:
            raise _TooLarge()
        yield line
