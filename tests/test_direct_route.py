"""DirectRoute runs what Tether's routes declare, and refuses a route it could not run faithfully."""

from __future__ import annotations

from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from tether.api.direct_route import DirectRoute

calls: list[str] = []


async def who(request: Request) -> str:
    calls.append("who")
    return request.headers.get("x-who", "nobody")


async def admin(name: str = Depends(who)) -> str:
    if name != "admin":
        raise PermissionError(name)
    return name


class Thing(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    name: str
    size: int = 1


class Search(BaseModel):
    name: str | None = None
    tag: list[str] = []


def _app() -> FastAPI:
    router = APIRouter(prefix="/things", route_class=DirectRoute)

    @router.get("/{thing_id}/parts/{part}")
    async def show(thing_id: str, part: str, request: Request, caller: str = Depends(admin),
                   again: str = Depends(who)) -> JSONResponse:
        return JSONResponse({"thing": thing_id, "part": part, "by": caller, "again": again,
                             "method": request.method})

    @router.post("", status_code=202)
    async def create(request: Request) -> dict[str, Any]:
        return {"created": (await request.json())["name"]}

    @router.put("/{thing_id}")
    async def replace(thing_id: str, body: Thing, caller: str = Depends(admin)) -> dict[str, Any]:
        return {"thing": thing_id, "name": body.name, "size": body.size}

    @router.get("")
    async def search(query: Annotated[Search, Query()]) -> dict[str, Any]:
        return {"name": query.name, "tag": query.tag}

    app = FastAPI()
    app.include_router(router)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        return JSONResponse({"invalid": [{"type": e["type"], "loc": list(e["loc"])} for e in error.errors()]},
                            status_code=400)

    @app.exception_handler(PermissionError)
    async def forbidden(request: Request, error: PermissionError) -> JSONResponse:
        return JSONResponse({"forbidden": str(error)}, status_code=403)

    return app


def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=_app()), base_url="http://test")


async def test_path_parameters_the_request_and_dependencies_reach_the_endpoint() -> None:
    calls.clear()
    async with _client() as client:
        response = await client.get("/things/t1/parts/p%202", headers={"x-who": "admin"})
    assert response.status_code == 200
    assert response.json() == {"thing": "t1", "part": "p 2", "by": "admin", "again": "admin", "method": "GET"}
    assert calls == ["who"]  # a dependency that two others need runs once a request


async def test_a_dependency_that_raises_goes_to_the_exception_handlers() -> None:
    async with _client() as client:
        response = await client.get("/things/t1/parts/p", headers={"x-who": "mallory"})
    assert response.status_code == 403
    assert response.json() == {"forbidden": "mallory"}


async def test_a_plain_result_is_json_with_the_declared_status() -> None:
    async with _client() as client:
        response = await client.post("/things", json={"name": "widget"})
    assert response.status_code == 202
    assert response.json() == {"created": "widget"}


async def test_a_body_model_is_validated_after_the_dependencies() -> None:
    async with _client() as client:
        done = await client.put("/things/t1", json={"name": "w"}, headers={"x-who": "admin"})
        refused = await client.put("/things/t1", json={"name": "w"}, headers={"x-who": "mallory"})
        extra = await client.put("/things/t1", json={"name": "w", "colour": "red"}, headers={"x-who": "admin"})
        empty = await client.put("/things/t1", headers={"x-who": "admin"})
        broken = await client.put("/things/t1", content=b"{", headers={"x-who": "admin"})
        nan = await client.put("/things/t1", content=b'{"name": "w", "size": NaN}', headers={"x-who": "admin"})
    assert done.json() == {"thing": "t1", "name": "w", "size": 1}
    assert refused.status_code == 403
    assert extra.json() == {"invalid": [{"type": "extra_forbidden", "loc": ["body", "colour"]}]}
    assert empty.json() == {"invalid": [{"type": "missing", "loc": ["body"]}]}
    assert broken.json() == {"invalid": [{"type": "json_invalid", "loc": ["body", 0]}]}
    assert nan.json() == {"invalid": [{"type": "json_invalid", "loc": ["body", 0]}]}


async def test_a_query_model_takes_the_last_of_a_repeated_value_unless_it_is_a_list() -> None:
    async with _client() as client:
        response = await client.get("/things", params=[("name", "a"), ("name", "b"), ("tag", "x"), ("tag", "y")])
    assert response.json() == {"name": "b", "tag": ["x", "y"]}


def test_the_document_describes_declared_bodies_and_queries() -> None:
    document = _app().openapi()
    assert "requestBody" in document["paths"]["/things/{thing_id}"]["put"]
    assert [p["name"] for p in document["paths"]["/things"]["get"]["parameters"]] == ["name", "tag"]


def test_a_route_with_parameters_it_would_not_parse_is_refused_when_declared() -> None:
    router = APIRouter(route_class=DirectRoute)
    with pytest.raises(TypeError, match="query"):
        @router.get("/search")
        async def search(limit: int = Query(10)) -> dict[str, Any]:
            return {}
    with pytest.raises(TypeError, match="header"):
        @router.get("/headed")
        async def headed(x_who: str = Header()) -> dict[str, Any]:
            return {}
    with pytest.raises(TypeError, match="body"):
        @router.post("/two")
        async def two(first: Thing, second: Thing) -> dict[str, Any]:
            return {}
    with pytest.raises(TypeError, match="not text"):
        @router.get("/items/{item_id}")
        async def item(item_id: int) -> dict[str, Any]:
            return {}
    with pytest.raises(TypeError, match="coroutine"):
        @router.get("/sync")
        def sync() -> dict[str, Any]:
            return {}
