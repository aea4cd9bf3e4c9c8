"""/v1/heartbeat/{node} (from 1.22): where ironic's deploy ramdisk calls back.

Tether's nodes run no ramdisk of ironic's (their agent is the fake BMC's), so no node is ever
handed an agent token, and every heartbeat that passes ironic's checks is refused as ironic
refuses one with a token it did not issue.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from fastapi import Request, Response

from tether.api import openapi, paths
from tether.api.baremetal import params
from tether.api.baremetal.nodes import find_node
from tether.api.baremetal.states import arguments
from tether.api.deps import json_object
from tether.api.versions import Microversion
from tether.domain.errors import baremetal as be
from tether.services.context import RequestContext

router = paths.router("baremetal")

# The microversion each heartbeat field came with (ironic's allow_*_in_heartbeat).
_FIELD_MINORS = {"callback_url": 22, "agent_token": 22, "agent_version": 36, "agent_verify_ca": 68,
                 "agent_status": 72, "agent_status_message": 72}
_AGENT_STATES = ("start", "end", "error")
_DOC = openapi.extra(openapi.json_body(openapi.obj(
    {name: openapi.STRING for name in _FIELD_MINORS}, ["callback_url"])))
_BODY_DOC = openapi.extra(openapi.json_body(openapi.obj(
    {"node_ident": openapi.STRING, **{name: openapi.STRING for name in _FIELD_MINORS}},
    ["node_ident", "callback_url"])))


@router.post("/heartbeat/{ident}", status_code=202, openapi_extra=_DOC)
async def heartbeat(ident: str, request: Request, ctx: params.admin("baremetal:node:ipa_heartbeat"),
                    version: params.Version) -> Response:
    if params.minor(version) < 22:
        raise be.NotFound("The resource could not be found.")
    return await _heartbeat(request, ctx, version, ident, await json_object(request))


@router.post("/heartbeat", status_code=202, openapi_extra=_BODY_DOC)
async def heartbeat_by_body(request: Request, ctx: params.admin("baremetal:node:ipa_heartbeat"),
                            version: params.Version) -> Response:
    """The node named in the body, as ironic's pecan controller also takes it."""
    if params.minor(version) < 22:
        raise be.NotFound("The resource could not be found.")
    body = await json_object(request)
    ident = body.pop("node_ident", None)
    if ident is None:
        raise be.InvalidParameterValue(err="Missing mandatory parameter: node_ident")
    if not isinstance(ident, str):
        raise be.InvalidParameterValue(err=f"Expected UUID or name for node_ident: {ident}")
    return await _heartbeat(request, ctx, version, ident, body)


async def _heartbeat(request: Request, ctx: RequestContext, version: Microversion, ident: str,
                     body: dict[str, Any]) -> Response:
    arguments(body, tuple(_FIELD_MINORS), "callback_url")
    if body.get("agent_version") and params.minor(version) < 36:
        raise be.InvalidParameterValue(err='Field "agent_version" not recognised')
    if (body.get("agent_status") or body.get("agent_status_message")) and params.minor(version) < 72:
        raise be.InvalidParameterValue(err='Fields "agent_status" and "agent_status_message" not recognised.')
    if body.get("agent_verify_ca") is not None and params.minor(version) < 68:
        raise be.InvalidParameterValue(err='Field "agent_verify_ca" not recognised in this version')
    await find_node(request, ctx, ident, version)
    callback_url = body["callback_url"]
    if "http" not in urlparse(callback_url).scheme and callback_url != "":
        raise be.InvalidParameterValue(err='An issue with the supplied "callback_url" has been detected.')
    if body.get("agent_token") is None:
        raise be.InvalidParameterValue(err="Agent token is required for heartbeat processing.")
    if body.get("agent_status") is not None and body["agent_status"] not in _AGENT_STATES:
        raise be.InvalidParameterValue(err=f"Agent status is invalid. Valid states are {','.join(_AGENT_STATES)}.")
    raise be.InvalidParameterValue(err="Invalid or missing agent token received.")
