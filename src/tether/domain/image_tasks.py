"""Glance's tasks (``/v2/tasks``): an admin's asynchronous import of an image from a URL.

Tether keeps no fetcher of remote data (``web-download`` is not among its
import methods either), so an import task is accepted, recorded and ends in
``failure`` with a message that says so and how to bring the data instead:
the task API's own way of saying an import did not happen. Nothing is
accepted and dropped: the task and its input stay visible until they expire.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether.domain.errors.image import ImageBadRequest

TYPES = ("import",)
STATUSES = ("pending", "processing", "success", "failure")
IMPORT_INPUT = ("import_from", "import_from_format", "image_properties")
TIME_TO_LIVE = 48 * 3600  # glance's [task] task_time_to_live, in hours there
NOT_FETCHED = ("Tether does not fetch image data from a URL (import_from {url}): upload it with "
               "PUT /v2/images/{{image_id}}/file, or stage it and import it with the glance-direct method.")


@dataclass
class ImageTask:
    id: str
    type: str
    owner: str
    status: str = "pending"
    input: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    message: str = ""
    created_at: float = 0.0
    updated_at: float = 0.0
    expires_at: float | None = None


def check_request(body: Any) -> tuple[str, dict[str, Any]]:
    """The type and input of a task request, or glance's 400."""
    if not isinstance(body, dict):
        raise ImageBadRequest(reason="Body expected in request.")
    for key in ("type", "input"):
        if key not in body:
            raise ImageBadRequest(reason=f"Task '{key}' is required")
    unknown = sorted(set(body) - {"type", "input"})
    if unknown:
        raise ImageBadRequest(reason=f"Provided object does not match schema 'task': Additional properties are not "
                                     f"allowed ({', '.join(repr(name) for name in unknown)} "
                                     f"{'was' if len(unknown) == 1 else 'were'} unexpected)")
    kind, task_input = body["type"], body["input"]
    if kind not in TYPES:
        raise ImageBadRequest(reason=f"Provided object does not match schema 'task': {kind!r} is not one of "
                                     f"{list(TYPES)!r}")
    if not isinstance(task_input, dict):
        raise ImageBadRequest(reason=f"Provided object does not match schema 'task': {task_input!r} is not of "
                                     "type 'object'")
    return kind, task_input


def outcome(task_input: dict[str, Any]) -> str:
    """Why an import with this input ends in failure: glance's words for missing input, else Tether's."""
    for key in IMPORT_INPUT:
        if key not in task_input:
            return f"Input does not contain '{key}' field"
    return NOT_FETCHED.format(url=task_input["import_from"])


def check_filters(status: str | None, kind: str | None, sort_dir: str) -> None:
    if status and status not in STATUSES:
        raise ImageBadRequest(reason=f"Invalid status value: {status}")
    if kind and kind not in TYPES:
        raise ImageBadRequest(reason=f"Invalid type value: {kind}")
    if sort_dir not in ("asc", "desc"):
        raise ImageBadRequest(reason=f"Invalid sort direction: {sort_dir}")
