"""/v1/inspection_rules (from 1.96): before it, ironic's 404 for a read and 405 for a write."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.nodes import service
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.errors import baremetal as be
from tether.domain.ids import is_uuid_like
from tether.domain.inspection_rules import ACTIONS, OPERATORS, InspectionRule, check_rule

router = paths.router("baremetal")

MINOR = 96
_ARGS = {"type": ["array", "object"]}
# ironic's inspection rule create_request_body.
RULE_SCHEMA = params.body_schema({
    "actions": {"type": "array", "minItems": 1, "items": {
        "type": "object", "required": ["op", "args"],
        "properties": {"op": {"enum": list(ACTIONS)}, "args": _ARGS, "loop": _ARGS}}},
    "conditions": {"type": "array", "minItems": 0, "items": {
        "type": "object", "required": ["op", "args"],
        "properties": {"op": {"enum": [*OPERATORS, *(f"!{op}" for op in OPERATORS)]}, "args": _ARGS,
                       "multiple": {"enum": ["any", "all", "first", "last"]}, "loop": _ARGS}}},
    "description": {"type": ["string", "null"], "maxLength": 255},
    "phase": {"type": ["string", "null"], "maxLength": 16},
    "priority": {"type": "integer", "minimum": 0},
    "sensitive": {"type": ["boolean", "null"]},
    "uuid": {"type": ["string", "null"]},
}, ("actions",))
SHORT_FIELDS = ["uuid", "priority", "phase", "description"]


def _available(request: Request, version: Microversion) -> None:
    if params.minor(version) < MINOR:
        message = "The API version does not allow inspection rules"
        if request.method == "GET":
            raise be.NotFound(message)
        raise errors.MethodNotAllowed(message)


def _check(rule: dict[str, Any]) -> None:
    params.check_schema("inspection_rule", rule, RULE_SCHEMA)
    if rule.get("uuid") is not None:
        params.uuid("uuid", rule["uuid"])
    check_rule(rule)


def _uuid(value: str) -> str:
    if not is_uuid_like(value):
        raise be.InvalidUUID(uuid=value)
    return value


def _steps(items: list[dict[str, Any]], *, condition: bool) -> list[dict[str, Any]]:
    """ironic's convert_actions and convert_conditions: op and args, and a loop only when there is one."""
    converted = []
    for item in items:
        shown = {"op": item["op"], "args": item["args"]}
        if item.get("loop"):
            shown["loop"] = item["loop"]
            if condition:
                shown["multiple"] = item.get("multiple", "any")
        converted.append(shown)
    return converted


def values(rule: InspectionRule) -> dict[str, Any]:
    sensitive = rule.sensitive
    return {"uuid": rule.uuid, "description": rule.description, "priority": rule.priority,
            "sensitive": rule.sensitive, "phase": rule.phase,
            "conditions": None if sensitive else _steps(rule.conditions, condition=True),
            "actions": None if sensitive else _steps(rule.actions, condition=False),
            "created_at": views.iso(rule.created_at), "updated_at": views.iso(rule.updated_at)}


def _body(request: Request, rule: InspectionRule, fields: list[str] | None = None) -> dict[str, Any]:
    body = values(rule)
    body["links"] = views.links(views.public_url(request), "inspection_rules", rule.uuid)
    if fields is not None:
        for name in set(body) - set(fields) - {"links"}:
            del body[name]
    return body


def _check_fields(fields: list[str] | None) -> None:
    sample = values(InspectionRule(uuid=""))
    invalid = [name for name in fields or () if name not in sample and name != "links"]
    if invalid:
        raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')


_LIST_ARGS = (*params.PAGING, "fields", "detail", "phase")


@router.get("/inspection_rules", openapi_extra=params.query_doc(*_LIST_ARGS))
@router.get("/inspection_rules/", include_in_schema=False)
async def list_rules(request: Request, ctx: params.admin("baremetal:inspection_rule:get"),
                     version: params.Version) -> dict[str, Any]:
    _available(request, version)
    args = params.query(request, _LIST_ARGS)
    _check_fields(params.string_list(args.get("fields")))
    fields = params.fields_and_detail(args, version, SHORT_FIELDS)
    page = params.Page.from_query(args)
    page.check_sort_key(values(InspectionRule(uuid="")), ("actions", "conditions"))
    rules = await service(request).inspection_rules.list(ctx, phase=args.get("phase"))
    by_uuid = {rule.uuid: values(rule) for rule in rules}
    chosen = page.apply(rules, lambda rule: by_uuid[rule.uuid], lambda marker: be.InspectionRuleNotFound(rule=marker))
    return views.collection("inspection_rules", [_body(request, rule, fields) for rule in chosen],
                            chosen[-1].uuid if chosen else None, page, views.public_url(request), "inspection_rules",
                            args)


@router.post("/inspection_rules", status_code=201, openapi_extra=params.body_doc(RULE_SCHEMA))
@router.post("/inspection_rules/", status_code=201, include_in_schema=False)
async def create_rule(request: Request, ctx: params.admin("baremetal:inspection_rule:create"),
                      version: params.Version) -> JSONResponse:
    _available(request, version)
    rule = await service(request).inspection_rules.create(ctx, await json_object(request), _check)
    location = views.link("self", views.public_url(request), "inspection_rules", rule.uuid)["href"]
    return JSONResponse(_body(request, rule), status_code=201, headers={"Location": location})


@router.get("/inspection_rules/{uuid}", openapi_extra=params.query_doc("fields"))
async def show_rule(uuid: str, request: Request, ctx: params.admin("baremetal:inspection_rule:get"),
                    version: params.Version) -> dict[str, Any]:
    _available(request, version)
    args = params.query(request, ("fields",))
    rule = await service(request).inspection_rules.get(ctx, _uuid(uuid))
    fields = params.string_list(args.get("fields"))
    _check_fields(fields)
    return _body(request, rule, fields)


@router.patch("/inspection_rules/{uuid}", openapi_extra=params.PATCH_DOC)
async def update_rule(uuid: str, request: Request, ctx: params.admin("baremetal:inspection_rule:update"),
                      version: params.Version) -> dict[str, Any]:
    _available(request, version)
    params.query(request, ())
    patch = await json_body(request)
    rule = await service(request).inspection_rules.update(ctx, _uuid(uuid), patch, _check)
    return _body(request, rule)


@router.delete("/inspection_rules/{uuid}", status_code=204)
async def delete_rule(uuid: str, request: Request, ctx: params.admin("baremetal:inspection_rule:delete"),
                      version: params.Version) -> Response:
    _available(request, version)
    params.query(request, ())
    await service(request).inspection_rules.delete(ctx, _uuid(uuid))
    return Response(status_code=204)
