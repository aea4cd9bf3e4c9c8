"""DirectRoute runs what Tether's routes declare, and refuses a route it could not run faithfully."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import JSONResponse

from tether.api.direct_route import DirectRoute

calls: list[str] = []


async def who(request: Request) -> str:
    calls.append("who")
    return request.headers.get("x-who", "nobody")


async def admin(name: str = Depends(who)) -> str:
    if name != "admin":
        raise PermissionError(name)
    return name


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

    app = FastAPI()
    app.include_router(router)

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


def test_a_route_with_parameters_it_would_not_parse_is_refused_when_declared() -> None:
    router = APIRouter(route_class=DirectRoute)
    with pytest.raises(TypeError, match="query"):
        @router.get("/search")
        async def search(limit: int = Query(10)) -> dict[str, Any]:
            return {}
    with pytest.raises(TypeError, match="not text"):
        @router.get("/items/{item_id}")
        async def item(item_id: int) -> dict[str, Any]:
            return {}
    with pytest.raises(TypeError, match="coroutine"):
        @router.get("/sync")
        def sync() -> dict[str, Any]:
            return {}
