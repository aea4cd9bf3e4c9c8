"""What every route needs: the cloud, the caller, the microversion, a JSON body."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import Request

from tether import logs
from tether.api import jsonbody
from tether.api.versions import Microversion
from tether.domain.errors import TetherError
from tether.domain.errors import identity as ie
from tether.services.context import RequestContext

if TYPE_CHECKING:
    from tether.cloud import Cloud


class BadRequestBody(TetherError):
    status = 400
    template = "{reason}"


def cloud(request: Request) -> Cloud:
    return request.app.state.cloud


async def caller(request: Request) -> RequestContext:
    """The authenticated caller; 401 in the service's own envelope without a valid token."""
    token_id = request.headers.get("x-auth-token")
    if not token_id:
        raise ie.Unauthorized()
    token = await cloud(request).identity.validate_token(token_id)
    logs.caller_known(token.user_id, token.project_id)
    return cloud(request).identity.context_for(token, request_id=request.state.request_id)


async def microversion(request: Request) -> Microversion:
    return request.state.microversion


async def json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw:
        raise BadRequestBody(reason="The request body is empty; a JSON object is required.")
    try:
        return jsonbody.loads(raw)
    except ValueError as error:  # JSONDecodeError and UnicodeDecodeError among them
        raise BadRequestBody(reason=f"Malformed request body: {error}") from None


async def json_object(request: Request, key: str | None = None) -> dict[str, Any]:
    """The body as a JSON object, or the object under ``key`` (``{"server": {...}}``)."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise BadRequestBody(reason="The request body must be a JSON object.")
    if key is None:
        return body
    inner = body.get(key)
    if not isinstance(inner, dict):
        raise BadRequestBody(reason=f"The request body must contain a '{key}' object.")
    return inner
