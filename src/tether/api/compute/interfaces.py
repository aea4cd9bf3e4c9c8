"""/servers/{id}/os-interface: attach (200), list, show, detach (202), as nova's attach_interfaces API.

Listing shows the ports bound to the server as the network service has them
(nova lists neutron's ports by device_id), each with the tag compute keeps.
"""

from __future__ import annotations

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.compute import bodies, views
from tether.api.compute.bodies import fail, unexpected
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.services.context import RequestContext

router = paths.router("compute")


@router.get("/servers/{server_id}/os-interface")
async def list_interfaces(server_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    attached = await cloud(request).compute.interface_attachments(ctx, server_id)
    return JSONResponse({"interfaceAttachments": [views.interface_attachment(port, entry, version)
                                                  for port, entry in attached]})


@router.get("/servers/{server_id}/os-interface/{port_id}")
async def show_interface(server_id: str, port_id: str, request: Request,
                         ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    port, entry = await cloud(request).compute.interface_attachment(ctx, server_id, port_id)
    return JSONResponse({"interfaceAttachment": views.interface_attachment(port, entry, version)})


@router.post("/servers/{server_id}/os-interface")
async def attach_interface(server_id: str, request: Request, body: bodies.InterfaceAttachRequest,
                           ctx: RequestContext = Depends(caller)) -> JSONResponse:
    version: Microversion = request.state.microversion
    attachment = body.interfaceAttachment or bodies.InterfaceAttachment()
    if attachment.tag is not None and not version.at_least("2.49"):
        raise unexpected("interfaceAttachment", "tag")
    if attachment.net_id and attachment.port_id:
        raise fail("Must not input both network_id and port_id")
    fixed_ip = attachment.fixed_ips[0].ip_address if attachment.fixed_ips else None
    if fixed_ip and not attachment.net_id:
        raise fail("Must input network_id when request IP address")
    compute = cloud(request).compute
    if not (attachment.net_id or attachment.port_id):
        await compute.server_record(ctx, server_id)  # nova looks the server up first: someone else's is a 404
        raise fail("Must input network_id or port_id")
    entry = await compute.attach_interface(ctx, server_id, port_id=attachment.port_id, net_id=attachment.net_id,
                                           fixed_ip=fixed_ip, tag=attachment.tag)
    port, entry = await compute.interface_attachment(ctx, server_id, entry.port_id)
    return JSONResponse({"interfaceAttachment": views.interface_attachment(port, entry, version)})


@router.delete("/servers/{server_id}/os-interface/{port_id}", status_code=202)
async def detach_interface(server_id: str, port_id: str, request: Request,
                           ctx: RequestContext = Depends(caller)) -> Response:
    await cloud(request).compute.detach_interface(ctx, server_id, port_id)
    return Response(status_code=202)
