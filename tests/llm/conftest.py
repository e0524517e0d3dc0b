"""Fixtures for tests/llm: the scripted test server, a refused port, a client factory."""

from __future__ import annotations

import socket
import threading

import pytest
from llm_fakes import FAKE_KEY, KEY_ENV, RNG_VALUE, FakeLLMServer, Sleeps

from pipeline.llm.factory import make_client
from pipeline.llm.limits import bounded_http_client


@pytest.fixture(scope="session")
def _server_process():
    """One :class:`FakeLLMServer` for the whole run (starting one per test costs more)."""
    server = FakeLLMServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.reset()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def llm_server(_server_process):
    """The running test server on 127.0.0.1, with an empty script and no recorded requests."""
    _server_process.reset()
    yield _server_process
    _server_process.reset()


@pytest.fixture(scope="session")
def shared_http():
    """One ``httpx.Client`` handed to most test clients (building one costs ~25 ms of TLS setup);
    the kind the clients build for themselves, so every socket operation honours the deadline."""
    with bounded_http_client() as client:
        yield client


@pytest.fixture
def closed_port() -> int:
    """A 127.0.0.1 port nobody listens on (connecting is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make(llm_server, sleeps, shared_http):
    """``make(provider, **overrides)``: a client aimed at the test server, key set, fake sleep.

    It uses the shared ``httpx.Client`` unless ``http_client=None`` is passed (then the
    client builds and closes its own, as in production).
    """
    clients = []

    def build(provider: str, **overrides):
        options = dict(
            model="test-model",
            base_url=llm_server.base_url(provider),
            env={KEY_ENV[provider]: FAKE_KEY},
            timeout=5.0,
            max_retries=3,
            sleep=sleeps,
            rng=lambda: RNG_VALUE,
            http_client=shared_http,
        )
        options.update(overrides)
        client = make_client(provider, **options)
        clients.append(client)
        return client

    yield build
    for client in clients:
        client.close()


@pytest.fixture
def ticking():
    """``ticking(step)``: a :class:`TickingClock` the deadlines of the test are measured on."""
    from contextlib import ExitStack

    from llm_fakes import TickingClock

    from pipeline.llm.deadline import deadline_clock

    with ExitStack() as stack:
        def start(step: float) -> TickingClock:
            return stack.enter_context(deadline_clock(TickingClock(step)))
        yield start
