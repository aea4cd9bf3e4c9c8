"""/v1/deploy_templates (from 1.55) and /v1/runbooks (from 1.92): named sets of steps.

Before its microversion a collection is ironic's 404 for a read and 405 for a write.
"""

# Without postponed annotations: the routes below are made in a function, and FastAPI reads their
# parameters' annotations, which name that function's ``kind``.
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Response
from fastapi.responses import JSONResponse

from tether.api import paths
from tether.api.baremetal import errors, params, views
from tether.api.baremetal.legacy_paths import had_json_suffix
from tether.api.baremetal.nodes import service
from tether.api.baremetal.params import field
from tether.api.baremetal.traits import TRAIT_SCHEMA, check_trait
from tether.api.deps import json_body, json_object
from tether.api.versions import Microversion
from tether.domain.baremetal import DeployTemplate, Runbook
from tether.domain.errors import baremetal as be
from tether.services.baremetal.step_sets import StepSets
from tether.services.context import RequestContext

router = paths.router("baremetal")

# ironic's conductor_steps.DEPLOYING_INTERFACE_PRIORITY and CLEANING_INTERFACE_PRIORITY (the same interfaces).
STEP_INTERFACES = ["vendor", "power", "management", "firmware", "deploy", "bios", "raid"]
_PLACE = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "minLength": 1, "pattern": "^[0-9]+$"}]}
# ironic's DEPLOY_STEP_SCHEMA and RUNBOOK_STEP_SCHEMA.
DEPLOY_STEP_SCHEMA = params.body_schema({
    "args": {"type": "object"}, "interface": {"type": "string", "enum": STEP_INTERFACES}, "priority": _PLACE,
    "step": {"type": "string", "minLength": 1}}, ("interface", "step", "args", "priority"))
RUNBOOK_STEP_SCHEMA = params.body_schema({
    "args": {"type": "object"}, "interface": {"type": "string", "enum": STEP_INTERFACES},
    "step": {"type": "string", "minLength": 1}, "order": _PLACE}, ("interface", "step", "order"))
# ironic's TEMPLATE_SCHEMA and RUNBOOK_SCHEMA (before 1.112).
TEMPLATE_SCHEMA = params.body_schema({
    "description": field("string", "null", max_length=255), "extra": field("object", "null"), "name": TRAIT_SCHEMA,
    "steps": {"type": "array", "items": DEPLOY_STEP_SCHEMA, "minItems": 1}, "uuid": field("string", "null")},
    ("steps", "name"))
RUNBOOK_SCHEMA = params.body_schema({
    "uuid": field("string", "null"), "name": TRAIT_SCHEMA,
    "steps": {"type": "array", "items": RUNBOOK_STEP_SCHEMA, "minItems": 1},
    "disable_ramdisk": field("boolean", "null"), "extra": field("object", "null"),
    "public": field("boolean", "null"), "owner": field("string", "null", max_length=255)}, ("steps", "name"))


@dataclass(frozen=True)
class Collection:
    """One of the two collections, as the routes below serve it."""

    name: str  # the path and the list's key
    what: str  # the singular in ironic's schema errors
    words: str  # the plural in "The API version does not allow ..."
    minor: int
    schema: dict[str, Any]
    service: Callable[[Request], StepSets[Any]]

    def available(self, request: Request, version: Microversion) -> None:
        if params.minor(version) < self.minor:
            message = f"The API version does not allow {self.words}"
            if request.method == "GET":
                raise be.NotFound(message)
            raise errors.MethodNotAllowed(message)

    def check(self, document: dict[str, Any]) -> None:
        params.check_schema(self.what, document, self.schema)
        check_trait("name", document["name"])
        if document.get("uuid") is not None:
            params.uuid("uuid", document["uuid"])

    def values(self, item: DeployTemplate | Runbook) -> dict[str, Any]:
        values: dict[str, Any] = {"uuid": item.uuid, "name": item.name, "steps": item.steps, "extra": item.extra}
        if isinstance(item, Runbook):
            values.update(owner=item.owner, public=item.public, disable_ramdisk=item.disable_ramdisk)
        values.update(created_at=views.iso(item.created_at), updated_at=views.iso(item.updated_at))
        return values

    def body(self, request: Request, item: DeployTemplate | Runbook,
             fields: list[str] | None = None) -> dict[str, Any]:
        body = self.values(item)
        body["links"] = views.links(views.public_url(request), self.name, item.uuid)
        if fields is not None:
            for name in set(body) - set(fields) - {"links"}:
                del body[name]
        return body

    def check_fields(self, fields: list[str] | None) -> None:
        sample = self.values(Runbook(uuid="", name="") if self.name == "runbooks" else DeployTemplate(uuid="", name=""))
        invalid = [name for name in fields or () if name not in sample and name != "links"]
        if invalid:
            raise be.InvalidParameterValue(err=f'Field(s) "{", ".join(invalid)}" are not valid')

    async def find(self, request: Request, ctx: RequestContext, ident: str) -> DeployTemplate | Runbook:
        """By uuid or name; with the ``.json`` that ``legacy_paths`` dropped when that is what the name holds."""
        params.uuid_or_name(self.what, ident)
        try:
            return await self.service(request).get(ctx, ident)
        except (be.DeployTemplateNotFound, be.RunbookNotFound):
            if not had_json_suffix(request.scope):
                raise
        return await self.service(request).get(ctx, f"{ident}.json")


TEMPLATES = Collection("deploy_templates", "deploy_template", "deploy templates", 55, TEMPLATE_SCHEMA,
                       lambda request: service(request).deploy_templates)
RUNBOOKS = Collection("runbooks", "runbook", "runbooks", 92, RUNBOOK_SCHEMA,
                      lambda request: service(request).runbooks)
_LIST_ARGS = (*params.PAGING, "fields", "detail")


def _routes(kind: Collection) -> None:
    base = f"/{kind.name}"

    async def list_all(request: Request, ctx: params.admin(f"baremetal:{kind.what}:get"),
                       version: params.Version) -> dict[str, Any]:
        kind.available(request, version)
        args = params.query(request, _LIST_ARGS)
        kind.check_fields(params.string_list(args.get("fields")))
        fields = params.fields_and_detail(args, version, ["uuid", "name"])
        page = params.Page.from_query(args)
        if page.sort_key not in ("id", "uuid", "name", "created_at", "updated_at"):
            raise be.InvalidParameterValue(err=f"The sort_key value {page.sort_key} is an invalid field for sorting")
        items = await kind.service(request).list(ctx)
        values = {item.uuid: kind.values(item) for item in items}
        chosen = page.apply(items, lambda item: values[item.uuid], kind.service(request).kind.not_found)
        bodies = [kind.body(request, item, fields) for item in chosen]
        return views.collection(kind.name, bodies, chosen[-1].uuid if chosen else None, page,
                                views.public_url(request), kind.name, args)

    async def create(request: Request, ctx: params.admin(f"baremetal:{kind.what}:create"),
                     version: params.Version) -> JSONResponse:
        kind.available(request, version)
        item = await kind.service(request).create(ctx, await json_object(request), kind.check)
        location = views.link("self", views.public_url(request), kind.name, item.uuid)["href"]
        return JSONResponse(kind.body(request, item), status_code=201, headers={"Location": location})

    async def show(ident: str, request: Request, ctx: params.admin(f"baremetal:{kind.what}:get"),
                   version: params.Version) -> dict[str, Any]:
        kind.available(request, version)
        args = params.query(request, ("fields",))
        fields = params.string_list(args.get("fields"))
        kind.check_fields(fields)
        return kind.body(request, await kind.find(request, ctx, ident), fields)

    async def update(ident: str, request: Request, ctx: params.admin(f"baremetal:{kind.what}:update"),
                     version: params.Version) -> dict[str, Any]:
        kind.available(request, version)
        params.query(request, ())
        patch = await json_body(request)
        item = await kind.find(request, ctx, ident)
        return kind.body(request, await kind.service(request).update(ctx, item.uuid, patch, kind.check))

    async def delete(ident: str, request: Request, ctx: params.admin(f"baremetal:{kind.what}:delete"),
                     version: params.Version) -> Response:
        kind.available(request, version)
        params.query(request, ())
        item = await kind.find(request, ctx, ident)
        await kind.service(request).delete(ctx, item.uuid)
        return Response(status_code=204)

    router.add_api_route(base, list_all, methods=["GET"], openapi_extra=params.query_doc(*_LIST_ARGS),
                         name=f"list_{kind.name}")
    router.add_api_route(f"{base}/", list_all, methods=["GET"], include_in_schema=False)
    router.add_api_route(base, create, methods=["POST"], status_code=201, openapi_extra=params.body_doc(kind.schema),
                         name=f"create_{kind.what}")
    router.add_api_route(f"{base}/", create, methods=["POST"], status_code=201, include_in_schema=False)
    router.add_api_route(f"{base}/{{ident}}", show, methods=["GET"], openapi_extra=params.query_doc("fields"),
                         name=f"show_{kind.what}")
    router.add_api_route(f"{base}/{{ident}}", update, methods=["PATCH"], openapi_extra=params.PATCH_DOC,
                         name=f"update_{kind.what}")
    router.add_api_route(f"{base}/{{ident}}", delete, methods=["DELETE"], status_code=204,
                         name=f"delete_{kind.what}")


_routes(TEMPLATES)
_routes(RUNBOOKS)
