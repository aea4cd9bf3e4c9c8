"""/v1/nodes/{node}/states: read them, and ask for provision and power changes (ironic's 202s).

The checks ironic's API makes before it hands a request to a conductor are
made here, in ironic's order; the state change itself is the service's.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

from tether.api import openapi, paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.nodes import find_node, service
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import Node
from tether.domain.baremetal_states import CLEANING, CLEANWAIT, DEPLOYWAIT, PROVISION_STATES, VERBS
from tether.domain.errors import baremetal as be
from tether.domain.state_machine import IllegalTransition
from tether.services.context import RequestContext

router = paths.router("baremetal")

# ironic's api_utils.MIN_VERB_VERSIONS: the microversion that brought each verb.
MIN_VERB_MINORS = {"manage": 4, "provide": 4, "inspect": 6, "abort": 13, "clean": 15, "adopt": 17,
                   "rescue": 38, "unrescue": 38, "deploy": 73, "undeploy": 73, "unhold": 85, "service": 87}
# ironic's node.ALLOWED_TARGET_POWER_STATES, and the soft ones that came with 1.27.
POWER_TARGETS = ("power on", "power off", "rebooting", "soft rebooting", "soft power off")
SOFT_POWER_TARGETS = ("soft rebooting", "soft power off")
# The driver interfaces a clean step may name (ironic's conductor_steps.CLEANING_INTERFACE_PRIORITY).
STEP_INTERFACES = ("vendor", "power", "management", "firmware", "deploy", "bios", "raid")

_PROVISION_ARGUMENTS = ("target", "configdrive", "clean_steps", "deploy_steps", "rescue_password",
                        "disable_ramdisk", "service_steps", "runbook")


_PROVISION_DOC = openapi.extra(openapi.json_body(openapi.obj({
    "target": {"type": "string", "enum": [*VERBS, *MIN_VERB_MINORS]}, "configdrive": {"type": ["string", "object"]},
    "clean_steps": {"type": "array", "items": openapi.obj({
        "interface": {"type": "string", "enum": list(STEP_INTERFACES)}, "step": openapi.STRING,
        "args": {"type": "object"}}, ["interface", "step"])},
    "deploy_steps": {"type": "array"}, "service_steps": {"type": "array"}, "rescue_password": openapi.STRING,
    "disable_ramdisk": {"type": "boolean"}, "runbook": openapi.STRING,
}, ["target"])))
_RAID_DOC = openapi.extra(openapi.json_body({"type": "object"}))
_POWER_DOC = openapi.extra(openapi.json_body(openapi.obj({
    "target": {"type": "string", "enum": list(POWER_TARGETS)}, "timeout": {"type": "integer"}}, ["target"])))


def arguments(body: dict[str, Any], allowed: tuple[str, ...], required: str) -> None:
    """ironic passes body keys as method arguments: unknown ones and a missing mandatory one are 400s."""
    unexpected = sorted(set(body) - set(allowed))
    if unexpected:
        raise be.InvalidParameterValue(err=f"Unexpected arguments: {', '.join(unexpected)}")
    if body.get(required) is None:
        raise be.Invalid(reason=f"Missing mandatory parameter: {required}")
    if not isinstance(body[required], str):
        raise be.InvalidParameterValue(err=f"Expected string for {required}: {body[required]}")


def _check_types(body: dict[str, Any]) -> None:
    for name, types in (("configdrive", (dict, str)), ("clean_steps", (list,)), ("deploy_steps", (list,)),
                        ("service_steps", (list,)), ("runbook", (str,)), ("rescue_password", (str,))):
        value = body.get(name)
        if value is not None and not isinstance(value, types):
            expected = ", ".join(["NoneType", *(kind.__name__ for kind in types)])
            raise be.InvalidParameterValue(err=f"Expected types {expected} for {name}: {value}")
    if "disable_ramdisk" in body:
        body["disable_ramdisk"] = params.boolean("disable_ramdisk", body["disable_ramdisk"])


def _check_clean_steps(steps: list[Any]) -> None:
    """ironic's _STEPS_SCHEMA: each step names a driver interface and a step, with optional args."""
    allowed = {"interface", "step", "args", "order", "execute_on_child_nodes", "limit_child_node_execution"}
    for step in steps:
        problem = None
        if not isinstance(step, dict):
            problem = f"{step!r} is not of type 'object'"
        elif "interface" not in step or "step" not in step:
            problem = f"'{'interface' if 'interface' not in step else 'step'}' is a required property"
        elif set(step) - allowed:
            problem = f"Additional properties are not allowed ({', '.join(map(repr, sorted(set(step) - allowed)))})"
        elif step["interface"] not in STEP_INTERFACES:
            problem = f"{step['interface']!r} is not one of {list(STEP_INTERFACES)!r}"
        elif not isinstance(step["step"], str) or not step["step"]:
            problem = f"{step['step']!r} is not a non-empty string"
        elif not isinstance(step.get("args", {}), dict):
            problem = f"{step['args']!r} is not of type 'object'"
        if problem:
            raise be.InvalidParameterValue(err=f"Invalid clean_steps: {problem}")


async def _runbook_steps(request: Request, ctx: RequestContext, node: Node, version: Microversion, target: str,
                         body: dict[str, Any]) -> list[dict[str, Any]]:
    """The clean steps a runbook stands for (ironic's _handle_runbook, before 1.112's runbook traits)."""
    params.require(version, 92)
    runbook = await service(request).runbooks.get(ctx, params.uuid_or_name("runbook", body["runbook"]))
    if runbook.name not in node.traits:
        raise be.Invalid(reason=f"This runbook has not been approved for use on this node {node.uuid}. Please ask "
                                "an administrator to add it to your node traits.")
    if target == "clean":
        if body.get("clean_steps"):
            raise be.Invalid(reason='Please provide either "clean_steps" or a runbook, but not both.')
        return [{"interface": step["interface"], "step": step["step"], "args": step["args"],
                 "order": step["order"]} for step in runbook.steps]
    # servicing is not a verb Tether's nodes take, so a runbook only ever stands for clean steps
    raise be.Invalid(reason="\"runbooks\" is only valid when setting target provision state to any of "
                            "['clean', 'service']")


def _actionable(node: Node, target: str) -> bool:
    event = VERBS.get(target)
    if event is None:
        return False
    try:
        PROVISION_STATES.next_state(node.provision_state, event)
    except IllegalTransition:
        return False
    return True


def _states_location(request: Request, ident: str) -> dict[str, str]:
    return {"Location": views.link("self", views.public_url(request), "nodes", f"{ident}/states")["href"]}


@router.get("/nodes/{ident}/states")
async def show_states(ident: str, request: Request,
                      ctx: params.admin("baremetal:node:get_states"),
                      version: params.Version) -> dict[str, Any]:
    params.query(request, ())
    return views.node_states(await find_node(request, ctx, ident, version), version)


@router.put("/nodes/{ident}/states/provision", status_code=202, openapi_extra=_PROVISION_DOC)
async def set_provision_state(ident: str, request: Request,
                              ctx: params.admin("baremetal:node:set_provision_state"),
                              version: params.Version) -> Response:
    body = await json_object(request)
    arguments(body, _PROVISION_ARGUMENTS, "target")
    _check_types(body)
    target = body["target"]
    node = await find_node(request, ctx, ident, version)
    params.require(version, MIN_VERB_MINORS.get(target, 0))
    if target in ("active", "rebuild") and node.maintenance:
        raise be.NodeInMaintenance(op="provisioning", node=node.uuid)
    if not _actionable(node, target):
        # ironic answers NodeLocked (409) when a conductor holds the node, else InvalidStateRequested (400).
        if node.reservation:
            raise be.NodeLocked(node=node.uuid, host=node.reservation)
        raise be.InvalidStateRequested(action=target, node=node.uuid, state=node.provision_state)
    configdrive = body.get("configdrive")
    if configdrive:
        allowed = ["active", "rebuild"] if params.minor(version) >= 35 else ["active"]
        if target not in allowed:
            raise be.Invalid(reason=f"Adding a config drive is only supported when setting provision state "
                                    f"to {', '.join(allowed)}")
        if isinstance(configdrive, dict) and params.minor(version) < 56:
            raise be.Invalid(reason="Providing a JSON object for configdrive is only supported starting with "
                                    "API version 1.56")
    clean_steps = body.get("clean_steps")
    if body.get("runbook"):
        clean_steps = await _runbook_steps(request, ctx, node, version, target, body)
    if body.get("disable_ramdisk") is not None:
        if target != "clean":
            raise be.Invalid(reason="disable_ramdisk is supported only with manual cleaning or servicing")
        params.require(version, 70)
    if clean_steps and target != "clean":
        raise be.Invalid(reason='"clean_steps" is only valid when setting target provision state to clean')
    if body.get("deploy_steps"):
        params.require(version, 69)
        if target not in ("active", "rebuild"):
            raise be.Invalid(reason='"deploy_steps" is only valid when setting target provision state to '
                                    'active or rebuild')
    if body.get("rescue_password") is not None and target != "rescue":
        raise be.Invalid(reason='"rescue_password" is only valid when setting target provision state to rescue')
    if target == "abort" and node.provision_state == DEPLOYWAIT:
        params.require(version, 110)
    if body.get("service_steps") and target != "service":
        raise be.Invalid(reason='"service_steps" is only valid when setting target provision state to service')
    if target == "clean":
        if not clean_steps:
            raise be.Invalid(reason='"clean_steps" is required when setting target provision state to clean')
        _check_clean_steps(clean_steps)
    await service(request).set_provision_state(ctx, node.uuid, target)
    return Response(status_code=202, headers=_states_location(request, ident))


@router.put("/nodes/{ident}/states/raid", status_code=204, openapi_extra=_RAID_DOC)
async def set_raid_config(ident: str, request: Request, ctx: params.admin("baremetal:node:set_raid_state"),
                          version: params.Version) -> Response:
    body = await json_body(request)
    if not isinstance(body, dict):
        raise be.InvalidParameterValue(err=f"Expected types dict for target_raid_config: {body}")
    node = await find_node(request, ctx, ident, version)
    params.require(version, 12)
    try:
        await service(request).set_target_raid_config(ctx, node.uuid, body)
    except be.UnsupportedDriverExtension as error:
        # ironic: 404, "because RAID is a standard interface and all drivers might not have it"
        raise be.NotFound(error.message) from None
    return Response(status_code=204)


@router.put("/nodes/{ident}/states/power", status_code=202, openapi_extra=_POWER_DOC)
async def set_power_state(ident: str, request: Request,
                          ctx: params.admin("baremetal:node:set_power_state"),
                          version: params.Version) -> Response:
    body = await json_object(request)
    arguments(body, ("target", "timeout"), "target")
    timeout = params.integer("timeout", body["timeout"]) if body.get("timeout") is not None else None
    target = body["target"]
    node = await find_node(request, ctx, ident, version)
    if (target in SOFT_POWER_TARGETS or timeout) and params.minor(version) < 27:
        raise errors.NotAcceptable()
    if timeout is not None and timeout < 1:
        raise be.Invalid(reason="timeout has to be positive integer")
    if target not in POWER_TARGETS:
        raise be.InvalidStateRequested(action=target, node=ident, state=node.power_state)
    if node.provision_state in (CLEANWAIT, CLEANING):
        # ironic leaves power alone while a node is being cleaned.
        raise be.InvalidStateRequested(action=target, node=ident, state=node.provision_state)
    await service(request).set_power_state(ctx, node.uuid, target)
    return Response(status_code=202, headers=_states_location(request, ident))
