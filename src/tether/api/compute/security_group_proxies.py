"""nova's security group proxies: /os-security-groups, /os-security-group-rules (until 2.35), a server's
groups (/servers/{id}/os-security-groups) and the addSecurityGroup/removeSecurityGroup actions.

As nova answers them with neutron: a group in nova's shape (``tenant_id``,
its ingress rules only, each rule's ports and remote as nova names them),
neutron's refusals turned into nova's status codes (neutron's 409 on create
is nova's 403 "limit exceeded", on delete its 400), and a server's groups are
those on its ports.
"""

from __future__ import annotations

import contextlib
import ipaddress
import urllib.parse
from typing import Any

from fastapi import Depends, Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.compute.bodies import JsonBody, fail
from tether.api.deps import caller, cloud
from tether.api.versions import Microversion
from tether.domain import security_groups as sg
from tether.domain.compute import Instance
from tether.domain.errors import compute as ce
from tether.domain.errors.network import NetworkError
from tether.domain.ids import is_uuid_like
from tether.domain.security_groups import SecurityGroup, SecurityGroupRule
from tether.services.context import RequestContext

router = paths.router("compute")

_PORT_PROTOCOLS = ("TCP", "UDP")


def _until_2_35(request: Request) -> None:
    version: Microversion = request.state.microversion
    if version.at_least("2.36"):
        raise ce.ComputeNotFound(reason="The resource could not be found.")


def _translated(error: NetworkError, conflict: int = 400) -> ce.ComputeError:
    """neutron's refusal as nova passes it on: a 404 stays one, a 409 becomes ``conflict``, the rest a 400."""
    if error.status == 404:
        return ce.ComputeNotFound(reason=error.message)
    if error.status == 409 and conflict == 403:
        return ce.ComputeForbidden(error.message)
    if error.status == 409 and conflict == 409:
        return ce.ComputeConflict(reason=error.message)
    return ce.ComputeBadRequest(reason=error.message)


def _cidr(rule: SecurityGroupRule) -> str:
    return rule.remote_ip_prefix or "0.0.0.0/0"


def _ports(rule: SecurityGroupRule) -> tuple[int | None, int | None]:
    """nova's ``_convert_to_nova_security_group_rule_format``: a protocol without ports is all of them."""
    if rule.protocol and rule.port_range_min is None and rule.port_range_max is None:
        return (1, 65535) if rule.protocol.upper() in _PORT_PROTOCOLS else (-1, -1)
    return rule.port_range_min, rule.port_range_max


def _rule_view(rule: SecurityGroupRule, groups: dict[str, SecurityGroup]) -> dict[str, Any] | None:
    from_port, to_port = _ports(rule)
    body: dict[str, Any] = {"id": rule.id, "parent_group_id": rule.security_group_id, "ip_protocol": rule.protocol,
                            "from_port": from_port, "to_port": to_port, "group": {}, "ip_range": {}}
    if rule.remote_group_id:
        source = groups.get(rule.remote_group_id)
        if source is None:
            return None  # the remote group went meanwhile: nova leaves the rule out
        body["group"] = {"name": source.name, "tenant_id": source.project_id}
    else:
        body["ip_range"] = {"cidr": _cidr(rule)}
    return body


async def _views(request: Request, ctx: RequestContext, groups: list[SecurityGroup]) -> list[dict[str, Any]]:
    network = cloud(request).network
    rules = await network.rules_of([group.id for group in groups]) if groups else []
    known = {group.id: group for group in groups}
    for rule in rules:
        if rule.remote_group_id and rule.remote_group_id not in known:
            with contextlib.suppress(NetworkError):  # gone meanwhile: its rules are left out
                known[rule.remote_group_id] = await network.get_security_group(ctx, rule.remote_group_id)
    views = []
    for group in groups:
        own = [view for rule in rules if rule.security_group_id == group.id and rule.direction == sg.INGRESS
               if (view := _rule_view(rule, known)) is not None]
        views.append({"id": group.id, "description": group.description, "name": group.name,
                      "tenant_id": group.project_id, "rules": own})
    return sorted(views, key=lambda view: (view["tenant_id"], view["name"]))


async def _group(request: Request, ctx: RequestContext, group_id: str) -> SecurityGroup:
    if not is_uuid_like(group_id):
        raise fail("Security group id should be uuid")
    try:
        return await cloud(request).network.get_security_group(ctx, group_id)
    except NetworkError as error:
        raise _translated(error) from None


def _group_fields(body: Any) -> tuple[str, str]:
    """nova's create/update schema: ``security_group`` with a ``name`` and a ``description`` of 0..255."""
    if not isinstance(body, dict) or "security_group" not in body:
        raise fail("Invalid input for field/attribute body. Value: {}. 'security_group' is a required property")
    group = body["security_group"]
    if not isinstance(group, dict):
        raise fail(f"Invalid input for field/attribute security_group. Value: {group}. "
                   f"{group!r} is not of type 'object'")
    for name in ("name", "description"):
        if name not in group:
            raise fail(f"Invalid input for field/attribute security_group. Value: {group}. "
                       f"'{name}' is a required property")
        value = group[name]
        if not isinstance(value, str):
            raise fail(f"Invalid input for field/attribute {name}. Value: {value}. {value!r} is not of type 'string'")
        if len(value) > 255:
            raise fail(f"Invalid input for field/attribute {name}. Value: {value}. {value!r} is too long")
    return group["name"], group["description"]


@router.get("/os-security-groups")
async def list_security_groups(request: Request, ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until_2_35(request)
    query = request.query_params
    filters = {} if ctx.is_admin and "all_tenants" in query else {"project_id": ctx.project_id}
    groups = await cloud(request).network.list_security_groups(ctx, **filters)
    groups.sort(key=lambda group: (group.created_at, group.id))
    offset, limit = _offset_and_limit(query.get("offset"), query.get("limit"))
    groups = groups[offset:] if limit is None else groups[offset:offset + limit]
    return {"security_groups": await _views(request, ctx, groups)}


def _offset_and_limit(offset: str | None, limit: str | None) -> tuple[int, int | None]:
    """nova's ``common.limited``: non-negative integers (schema), a limit of 0 is no limit."""
    numbers = []
    for name, raw in (("offset", offset), ("limit", limit)):
        if raw is None:
            numbers.append(None)
            continue
        if not raw.isdigit():
            raise fail(f"Invalid input for query parameters {name}. Value: {raw}. "
                       f"'{raw}' does not match '^[0-9]*$'")
        numbers.append(int(raw))
    return numbers[0] or 0, numbers[1] or None


@router.post("/os-security-groups")
async def create_security_group(request: Request, raw: JsonBody, ctx: RequestContext = Depends(caller)) -> JSONResponse:
    _until_2_35(request)
    name, description = _group_fields(raw.root)
    try:
        group = await cloud(request).network.create_security_group(ctx, name=name, description=description)
    except NetworkError as error:
        raise _translated(error, 403) from None
    return JSONResponse({"security_group": (await _views(request, ctx, [group]))[0]})


@router.get("/os-security-groups/{group_id}")
async def show_security_group(group_id: str, request: Request,
                              ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until_2_35(request)
    group = await _group(request, ctx, group_id)
    return {"security_group": (await _views(request, ctx, [group]))[0]}


@router.put("/os-security-groups/{group_id}")
async def update_security_group(group_id: str, request: Request, raw: JsonBody,
                                ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    _until_2_35(request)
    group = await _group(request, ctx, group_id)
    name, description = _group_fields(raw.root)
    try:
        group = await cloud(request).network.update_security_group(ctx, group.id, name=name,
                                                                   description=description)
    except NetworkError as error:
        raise _translated(error) from None
    return {"security_group": (await _views(request, ctx, [group]))[0]}


@router.delete("/os-security-groups/{group_id}", status_code=202)
async def delete_security_group(group_id: str, request: Request, ctx: RequestContext = Depends(caller)) -> Response:
    _until_2_35(request)
    group = await _group(request, ctx, group_id)
    try:
        await cloud(request).network.delete_security_group(ctx, group.id)
    except NetworkError as error:
        raise _translated(error) from None
    return Response(status_code=202)


@router.delete("/os-security-groups/", status_code=404, include_in_schema=False)
async def delete_no_security_group(request: Request) -> Response:
    """An empty id names no group: nova's routes match nothing (404), where a redirect would find the list."""
    raise ce.ComputeNotFound(reason="The resource could not be found.")


# -- rules ----------------------------------------------------------------------------------


def _uuid_field(name: str, value: Any) -> str:
    if not isinstance(value, str) or not is_uuid_like(value):
        raise fail(f"Invalid input for field/attribute {name}. Value: {value}. {value!r} is not a 'uuid'")
    return value


def _parse_cidr(cidr: Any) -> str:
    """nova's ``parse_cidr``: none is anywhere; else a valid network, URL-quoted or not."""
    if not cidr:
        return "0.0.0.0/0"
    text = urllib.parse.unquote(str(cidr))
    try:
        ipaddress.ip_network(text, strict=False)
        if "/" not in text:
            raise ValueError(text)
    except ValueError:
        raise fail(f"{text} is not a valid IP network.") from None
    return text


def _ingress_rule(protocol: Any, from_port: Any, to_port: Any, group_id: str | None,
                  cidr: str | None) -> dict[str, Any] | None:
    """nova's ``_new_ingress_rule``: the rule's values, or None when a CIDR rule has no protocol and ports."""
    values: dict[str, Any] = {}
    if group_id:
        values["group_id"] = group_id
        upper = protocol.upper() if isinstance(protocol, str) else ""
        if upper == "ICMP" and from_port is None and to_port is None:
            from_port = to_port = -1
        elif upper in _PORT_PROTOCOLS and from_port is None and to_port is None:
            from_port, to_port = 1, 65535
    elif cidr:
        values["cidr"] = cidr
    if protocol and from_port is not None and to_port is not None:
        protocol = str(protocol)
        upper = protocol.upper()
        try:
            low, high = int(from_port), int(to_port)
        except (TypeError, ValueError):
            if upper == "ICMP":
                raise fail("Invalid input received: Type and Code must be integers for ICMP protocol type") \
                    from None
            raise fail("Invalid input received: To and From ports must be integers") from None
        if upper not in ("TCP", "UDP", "ICMP"):
            raise fail(f"Invalid IP protocol {protocol}.")
        if upper in _PORT_PROTOCOLS and low > high:
            raise fail(f"Invalid port range {low}:{high}. Former value cannot be greater than the later")
        if upper in _PORT_PROTOCOLS and (low < 1 or high > 65535):
            raise fail(f"Invalid port range {low}:{high}. Valid {upper} ports should be between 1-65535")
        if upper == "ICMP" and not (-1 <= low <= 255 and -1 <= high <= 255):
            raise fail(f"Invalid port range {low}:{high}. For ICMP, the type:code must be valid")
        values.update(protocol=protocol, from_port=low, to_port=high)
    elif cidr:
        return None
    return values


def _same_rule(rule: SecurityGroupRule, new: dict[str, Any]) -> bool:
    """nova's ``_rule_exists``: the same remote group, CIDR, ports and protocol."""
    from_port, to_port = _ports(rule)
    existing = {"group_id": rule.remote_group_id, "cidr": _cidr(rule), "from_port": from_port,
                "to_port": to_port, "protocol": rule.protocol}
    return all(existing[key] == new.get(key) for key in existing)


@router.post("/os-security-group-rules")
async def create_security_group_rule(request: Request, raw: JsonBody,
                                     ctx: RequestContext = Depends(caller)) -> JSONResponse:
    _until_2_35(request)
    body = raw.root
    if not isinstance(body, dict) or not isinstance(body.get("security_group_rule"), dict):
        raise fail("Invalid input for field/attribute body. 'security_group_rule' is a required property")
    asked = body["security_group_rule"]
    if "parent_group_id" not in asked:
        raise fail(f"Invalid input for field/attribute security_group_rule. Value: {asked}. "
                   "'parent_group_id' is a required property")
    parent_id = _uuid_field("parent_group_id", asked["parent_group_id"])
    group_id = asked.get("group_id")
    if group_id is not None:
        group_id = _uuid_field("group_id", group_id)
    network = cloud(request).network
    parent = await _group(request, ctx, parent_id)
    source = await _group(request, ctx, group_id) if group_id else None
    cidr = None if group_id else _parse_cidr(asked.get("cidr"))
    new = _ingress_rule(asked.get("ip_protocol"), asked.get("from_port"), asked.get("to_port"), group_id, cidr)
    if new is None:
        raise fail("Not enough parameters to build a valid rule.")
    if "cidr" in new:
        network_part, _, prefix = new["cidr"].partition("/")
        if network_part not in ("0.0.0.0", "::") and prefix == "0":
            raise fail(f"Bad prefix for network in cidr {new['cidr']}")
    if any(_same_rule(rule, new) for rule in await network.rules_of([parent.id])
           if rule.direction == sg.INGRESS):
        raise fail(f"This rule already exists in group {parent.id}")
    spec: dict[str, Any] = {"security_group_id": parent.id, "direction": sg.INGRESS,
                            "remote_group_id": group_id, "remote_ip_prefix": new.get("cidr")}
    try:
        spec["protocol"] = sg.convert_protocol(new.get("protocol"))
        spec["ethertype"] = sg.IPV6 if new.get("cidr") and ipaddress.ip_network(new["cidr"], strict=False).version \
            == 6 else sg.IPV4
        if new.get("from_port", -1) != -1:
            spec["port_range_min"] = new["from_port"]
        if new.get("to_port", -1) != -1:
            spec["port_range_max"] = new["to_port"]
        rule, = await network.create_security_group_rules(ctx, [spec])
    except NetworkError as error:
        raise _translated(error, 403) from None
    groups = {parent.id: parent} | ({source.id: source} if source else {})
    return JSONResponse({"security_group_rule": _rule_view(rule, groups)})


@router.delete("/os-security-group-rules/{rule_id}", status_code=202)
async def delete_security_group_rule(rule_id: str, request: Request,
                                     ctx: RequestContext = Depends(caller)) -> Response:
    _until_2_35(request)
    if not is_uuid_like(rule_id):
        raise fail("Security group id should be uuid")
    try:
        await cloud(request).network.delete_security_group_rule(ctx, rule_id)
    except NetworkError as error:
        raise _translated(error) from None
    return Response(status_code=202)


# -- a server's groups ------------------------------------------------------------------------


async def _instance(request: Request, ctx: RequestContext, server_id: str) -> Instance:
    instance = await cloud(request).compute.listed_instance(ctx, server_id)
    if instance is None or instance.deleted:
        raise ce.InstanceNotFound(instance_id=server_id)
    return instance


@router.get("/servers/{server_id}/os-security-groups")
async def list_server_security_groups(server_id: str, request: Request,
                                      ctx: RequestContext = Depends(caller)) -> dict[str, Any]:
    instance = await _instance(request, ctx, server_id)
    network = cloud(request).network
    ports = await network.list_ports(ctx, device_id=instance.uuid)
    wanted = sorted({group_id for port in ports for group_id in port.security_group_ids or ()})
    groups = await network.list_security_groups(ctx, id=wanted) if wanted else []
    return {"security_groups": await _views(request, ctx, groups)}


def _group_name(action: str, value: Any) -> str:
    if not isinstance(value, dict):
        raise fail(f"Invalid input for field/attribute {action}. Value: {value}. {value!r} is not of type 'object'")
    for key in value:
        if key != "name":
            raise fail(f"Invalid input for field/attribute {action}. Additional properties are not allowed "
                       f"('{key}' was unexpected)")
    name = value.get("name")
    if name is None:
        raise fail(f"Invalid input for field/attribute {action}. Value: {value}. 'name' is a required property")
    if not isinstance(name, str):
        raise fail(f"Invalid input for field/attribute name. Value: {name}. {name!r} is not of type 'string'")
    if not name.strip():
        raise fail("Security group name cannot be empty")
    return name


async def _named_group(request: Request, ctx: RequestContext, name: str) -> str:
    """neutron's find by name or id among the caller's project's groups (nova's 409 when the name is not unique)."""
    groups = await cloud(request).network.list_security_groups(ctx, project_id=ctx.project_id)
    by_id = [group.id for group in groups if group.id == name]
    if by_id:
        return by_id[0]
    matches = [group.id for group in groups if group.name == name]
    if len(matches) > 1:
        raise ce.ComputeConflict(reason=f"Multiple security_group matches found for name '{name}', "
                                        "use an ID to be more specific.")
    if not matches:
        raise ce.ComputeNotFound(reason=f"Security group {name} is not found for project {ctx.project_id}")
    return matches[0]


async def _change_groups(request: Request, ctx: RequestContext, server_id: str, value: Any, add: bool) -> Response:
    action = "addSecurityGroup" if add else "removeSecurityGroup"
    instance = await _instance(request, ctx, server_id)
    name = _group_name(action, value)
    group_id = await _named_group(request, ctx, name)
    network = cloud(request).network
    ports = await network.list_ports(ctx, device_id=instance.uuid)
    if not ports:
        raise ce.ComputeNotFound(reason=f"instance_id {instance.uuid} could not be found as device id on any ports")
    changed = False
    for port in ports:
        groups = list(port.security_group_ids or ())
        if add:
            if not port.port_security_enabled or not port.fixed_ips:
                raise fail("Unable to add security group to port - port does not meet security requirements")
            if group_id in groups:
                continue
            groups.append(group_id)
        elif group_id in groups:
            groups.remove(group_id)
        else:
            continue
        try:
            await network.update_port(ctx, port.id, security_groups=groups)
        except NetworkError as error:
            raise _translated(error, 409) from None
        changed = True
    if not add and not changed:
        raise ce.ComputeNotFound(reason=f"Security group {name} not associated with the instance {instance.uuid}")
    return Response(status_code=202)


async def add_security_group(request: Request, ctx: RequestContext, server_id: str, value: Any) -> Response:
    return await _change_groups(request, ctx, server_id, value, add=True)


async def remove_security_group(request: Request, ctx: RequestContext, server_id: str, value: Any) -> Response:
    return await _change_groups(request, ctx, server_id, value, add=False)
