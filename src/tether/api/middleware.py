"""Every request: a request id, a body size limit, microversion negotiation and its echo, and
its line in the access log.

Plain ASGI rather than Starlette's BaseHTTPMiddleware: it sits on every
request, and the benchmark's floor is an authenticated no-op GET.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any

from tether import logs
from tether.api import versions
from tether.api.envelopes import error_body, service_of

access = logging.getLogger(logs.ACCESS)

# heat's own max_json_body_size; the other services' oslo.middleware sizelimit default (114688)
# would refuse stack templates that heat takes.
MAX_BODY = 1024 * 1024

Scope = dict[str, Any]

# Image data is streamed to disk, so its size is not the body limit's to judge.
_IMAGE_DATA = re.compile(r"^/image/v2/images/[^/]+/(file|stage)$")


class TetherMiddleware:
    """Hands each request to its service's application (``others`` for any other path)."""

    def __init__(self, services: dict[str, Any], others: Any, max_body: int = MAX_BODY,
                 emulating: list[str] | None = None) -> None:
        self.services = services
        self.others = others
        self.max_body = max_body
        # Every answer of a cloud that misbehaves on purpose says so, so that tools can tell.
        self.always = [(b"x-tether-emulating", ", ".join(emulating).encode())] if emulating else []

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        service = service_of(scope["path"])
        app = self.services.get(service, self.others)
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        request_id = f"req-{uuid.uuid4()}"
        logs.current_request.set(logs.RequestLog(request_id))
        if access.isEnabledFor(logging.INFO):
            await self._logged(app, scope, receive, send, service, request_id)
        else:
            await self._answer(app, scope, receive, send, service, request_id)

    async def _logged(self, app: Any, scope: Scope, receive: Any, send: Any, service: str, request_id: str) -> None:
        started = time.perf_counter()
        status, length = 500, 0  # what the server answers for a request whose handler never replied

        async def counted(message: dict[str, Any]) -> None:
            nonlocal status, length
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                length += len(message.get("body", b""))
            await send(message)

        try:
            await self._answer(app, scope, receive, counted, service, request_id)
        finally:
            query = scope.get("query_string", b"").decode("latin-1")
            target = f"{scope['path']}?{query}" if query else scope["path"]
            client = scope["client"][0] if scope.get("client") else "-"
            access.info(logs.access_line(client, scope["method"], target, status, length,
                                         time.perf_counter() - started))

    async def _answer(self, app: Any, scope: Scope, receive: Any, send: Any, service: str, request_id: str) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        extra: list[tuple[bytes, bytes]] = [(b"x-openstack-request-id", request_id.encode()), *self.always]
        try:
            if service == "compute":
                version = versions.negotiate("compute", versions.requested("compute", headers), versions.COMPUTE_MIN,
                                             versions.COMPUTE_MAX, versions.COMPUTE_MIN)
                state["microversion"] = version
                extra += [(b"x-compute-request-id", request_id.encode()),
                          (b"openstack-api-version", f"compute {version}".encode()),
                          (b"x-openstack-nova-api-version", str(version).encode()),
                          (b"vary", b"OpenStack-API-Version, X-OpenStack-Nova-API-Version")]
            elif service == "baremetal":
                extra += [(b"x-openstack-ironic-api-minimum-version", versions.fmt(versions.BAREMETAL_MIN).encode()),
                          (b"x-openstack-ironic-api-maximum-version", versions.fmt(versions.BAREMETAL_MAX).encode())]
                version = versions.negotiate("baremetal", versions.requested("baremetal", headers),
                                             versions.BAREMETAL_MIN, versions.BAREMETAL_MAX, versions.BAREMETAL_MIN)
                state["microversion"] = version
                extra += [(b"x-openstack-ironic-api-version", str(version).encode()),
                          (b"openstack-api-version", f"baremetal {version}".encode()),
                          (b"vary", b"X-OpenStack-Ironic-API-Version")]
        except versions.VersionNotAcceptable as error:
            await _reply(send, 406, error_body(service, 406, str(error)), extra)
            return
        except versions.VersionMalformed as error:
            await _reply(send, 400, error_body(service, 400, str(error)), extra)
            return
        length = headers.get("content-length")
        limit = None if _IMAGE_DATA.match(scope["path"]) else self.max_body
        if length is not None and (not length.isdigit() or (limit is not None and int(length) > limit)):
            await _reply(send, 413, error_body(service, 413, "Request is too large."), extra)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = list(message.get("headers", [])) + extra
            await send(message)

        await app(scope, receive if limit is None else _limited(receive, limit), send_with_headers)


def _limited(receive: Any, limit: int) -> Any:
    seen = 0

    async def wrapped() -> dict[str, Any]:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge
        return message

    return wrapped


class BodyTooLarge(Exception):
    pass


async def _reply(send: Any, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode()), *headers]})
    await send({"type": "http.response.body", "body": payload})
