"""Each service's own error body, decided in one place by the service a path belongs to."""

from __future__ import annotations

import json
from typing import Any

NOVA_FAULTS = {
    400: "badRequest", 401: "unauthorized", 403: "forbidden", 404: "itemNotFound", 405: "badMethod",
    406: "notAcceptable", 409: "conflictingRequest", 413: "overLimit", 415: "badMediaType",
    422: "unprocessableEntity", 501: "notImplemented", 503: "serviceUnavailable",
}
TITLES = {
    400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
    406: "Not Acceptable", 409: "Conflict", 413: "Request Entity Too Large", 415: "Unsupported Media Type",
    422: "Unprocessable Entity", 500: "Internal Server Error", 501: "Not Implemented", 503: "Service Unavailable",
}
SERVICES = ("identity", "compute", "network", "image", "baremetal", "orchestration")


def service_of(path: str) -> str:
    head = path.lstrip("/").split("/", 1)[0]
    return head if head in SERVICES else "tether"


def error_body(service: str, status: int, message: str, kind: str | None = None) -> dict[str, Any]:
    title = TITLES.get(status, "Error")
    if service == "compute":
        return {NOVA_FAULTS.get(status, "computeFault"): {"code": status, "message": message}}
    if service == "network":
        return {"NeutronError": {"type": kind or title.replace(" ", ""), "message": message, "detail": ""}}
    if service == "baremetal":
        fault = {"faultstring": message, "faultcode": "Client" if status < 500 else "Server", "debuginfo": None}
        return {"error_message": json.dumps(fault)}
    if service == "orchestration":
        return {"explanation": message, "code": status, "title": title,
                "error": {"message": message, "traceback": None, "type": kind or title.replace(" ", "")}}
    if service == "image":
        return {"code": status, "title": title, "message": message}
    return {"error": {"code": status, "title": title, "message": message}}
