"""A request body as glance reads one: present, then JSON, each refusal in glance's words."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from tether.api import jsonbody
from tether.domain.errors.image import ImageBadRequest


async def request_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        raise ImageBadRequest(reason="Body expected in request.")
    try:
        return jsonbody.loads(raw)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError among them
        raise ImageBadRequest(reason=f"Malformed JSON in request body: {error}") from None
