"""Time limits for slow clients: request headers and bodies must arrive within a deadline.

A client that opens connections and sends its request a byte at a time once held ~21,000 of them open,
until the server had no file descriptors left and every request failed. Two guards close that:

* :class:`HeaderDeadline` (a mix-in for uvicorn's HTTP protocol, installed by :func:`install`): a connection
  must finish its request headers within ``HEADER_TIMEOUT_S`` of opening (or of its previous response), and
  at most ``MAX_PENDING`` connections may be waiting for their headers at once — past that, the one waiting
  longest is closed. A client that sends its headers promptly never notices.
* :class:`BodyDeadline` (ASGI middleware): the request body must arrive within ``BODY_TIMEOUT_S``; otherwise
  the request gets HTTP 408. Waiting for a client's disconnect while a response streams is not limited.
"""

from __future__ import annotations

import asyncio
import os
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar

from advisor.env_limits import env_number

HEADER_TIMEOUT_S = 15.0
BODY_TIMEOUT_S = 30.0
MAX_PENDING = 512


@dataclass(frozen=True)
class Deadlines:
    header_s: float = HEADER_TIMEOUT_S
    body_s: float = BODY_TIMEOUT_S


def deadlines(env: Any = None) -> Deadlines:
    """``GPU_ADVISOR_HEADER_TIMEOUT_S`` and ``GPU_ADVISOR_BODY_TIMEOUT_S`` (defaults 15 s and 30 s); a bad
    value raises ValueError naming the variable."""
    env = os.environ if env is None else env
    return Deadlines(env_number(env, "GPU_ADVISOR_HEADER_TIMEOUT_S", HEADER_TIMEOUT_S, 0.5, 600),
                     env_number(env, "GPU_ADVISOR_BODY_TIMEOUT_S", BODY_TIMEOUT_S, 0.5, 3600))


class HeaderDeadline:
    """Mix-in for a uvicorn HTTP protocol class (h11 or httptools): both keep ``loop``, ``transport`` and the
    current request's ``cycle`` (a new one once a request's headers are complete)."""

    header_timeout_s: ClassVar[float] = HEADER_TIMEOUT_S
    max_pending: ClassVar[int] = MAX_PENDING
    _pending: ClassVar[OrderedDict[Any, None]] = OrderedDict()

    loop: Any
    transport: Any
    cycle: Any

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm(self) -> None:
        self._disarm()
        self._armed_cycle = self.cycle
        self._timer = self.loop.call_later(self.header_timeout_s, self._expire)
        pending = type(self)._pending
        pending[self] = None
        while len(pending) > self.max_pending:
            oldest = next(iter(pending))
            pending.pop(oldest)
            if oldest._waiting():
                oldest._close()

    def _disarm(self) -> None:
        timer = getattr(self, "_timer", None)
        if timer is not None:
            timer.cancel()
            self._timer = None
        type(self)._pending.pop(self, None)

    def _waiting(self) -> bool:
        """Still waiting for the headers of its next request on this protocol (not upgraded, not closed)."""
        transport = self.transport
        return (self.cycle is self._armed_cycle and transport is not None and not transport.is_closing()
                and transport.get_protocol() is self)

    def _expire(self) -> None:
        self._timer = None
        type(self)._pending.pop(self, None)
        if self._waiting():
            self._close()

    def _close(self) -> None:
        self._disarm()
        self.transport.close()


def guarded(protocol: type, header_timeout_s: float = HEADER_TIMEOUT_S) -> type:
    """``protocol`` with a header deadline (its own pending set, so servers in one process do not mix)."""
    return type(f"Guarded{protocol.__name__}", (HeaderDeadline, protocol),
                {"_pending": OrderedDict(), "header_timeout_s": header_timeout_s})


def install(header_timeout_s: float = HEADER_TIMEOUT_S) -> None:
    """Make uvicorn's automatic HTTP protocol choice the guarded one (Gradio builds its server with the
    defaults, so this is where a deadline for headers can be set); call it before the server starts."""
    import uvicorn.config
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    global GuardedAutoHTTPProtocol
    GuardedAutoHTTPProtocol = guarded(AutoHTTPProtocol, header_timeout_s)
    uvicorn.config.HTTP_PROTOCOLS["auto"] = f"{__name__}:GuardedAutoHTTPProtocol"


GuardedAutoHTTPProtocol: type | None = None


class BodyDeadline:
    """Requests whose body has not fully arrived within ``timeout_s`` get HTTP 408 at once; the app is then
    told the client has gone, and whatever it still sends is dropped."""

    def __init__(self, app: Any, timeout_s: float = BODY_TIMEOUT_S) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        complete = False
        started = False
        refused = False

        async def timed() -> dict[str, Any]:
            nonlocal complete, refused
            if complete:  # after the body, receive() only waits for a disconnect: no limit
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                complete = refused = True
                if not started:
                    await self._refuse(send)
                return {"type": "http.disconnect"}
            complete = message.get("type") != "http.request" or not message.get("more_body", False)
            return message

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal started
            if refused:
                return
            started = started or message.get("type") == "http.response.start"
            await send(message)

        await self.app(scope, timed, tracked)

    async def _refuse(self, send: Any) -> None:
        body = f"request body not received within {self.timeout_s:g} s".encode()
        await send({"type": "http.response.start", "status": 408,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})
