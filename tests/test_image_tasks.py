"""Glance's tasks API through openstacksdk and the CLI: admin-only, validated, and an import from a
URL that Tether does not fetch ends in ``failure`` saying so, never in a silent success."""

from __future__ import annotations

import json

import openstack.exceptions
import pytest

IMPORT = {"import_from": "http://example.invalid/cirros.qcow2", "import_from_format": "qcow2",
          "image_properties": {"disk_format": "qcow2", "container_format": "bare", "name": "from-url"}}


def test_an_import_task_from_a_url_fails_saying_why_and_makes_no_image(sdk) -> None:
    images_before = {image.id for image in sdk.image.images()}
    task = sdk.image.create_task(type="import", input=IMPORT)
    done = sdk.image.wait_for_task(task, status="failure", wait=30)
    assert done.status == "failure"
    assert "does not fetch image data from a URL" in done.message and "glance-direct" in done.message
    assert done.input == IMPORT and done.result is None and done.expires_at
    assert {image.id for image in sdk.image.images()} == images_before
    assert task.id in {listed.id for listed in sdk.image.tasks()}
    assert [listed.id for listed in sdk.image.tasks(status="failure", type="import")].count(task.id) == 1
    assert task.id not in {listed.id for listed in sdk.image.tasks(status="success")}


def test_an_import_task_missing_its_input_fails_in_glances_words(sdk) -> None:
    task = sdk.image.create_task(type="import", input={"import_from_format": "qcow2"})
    assert sdk.image.get_task(task.id).message == "Input does not contain 'import_from' field"


@pytest.mark.parametrize(("body", "message"), [
    ({"input": {}}, "Task 'type' is required"),
    ({"type": "import"}, "Task 'input' is required"),
    ({"type": "convert", "input": {}}, "'convert' is not one of ['import']"),
    ({"type": "import", "input": "x"}, "is not of type 'object'"),
    ({"type": "import", "input": {}, "owner": "me"}, "Additional properties are not allowed"),
])
def test_a_bad_task_request_is_glances_400_and_records_nothing(sdk, body, message) -> None:
    before = [task.id for task in sdk.image.tasks()]
    answer = sdk.image.post("/tasks", json=body)
    assert answer.status_code == 400, answer.text
    assert message in answer.json()["message"]
    assert [task.id for task in sdk.image.tasks()] == before


def test_tasks_are_for_admins_only(live_cloud, sdk) -> None:
    task = sdk.image.create_task(type="import", input=IMPORT)
    demo = live_cloud.connect("tether-demo")
    try:
        for call in (lambda: demo.image.create_task(type="import", input=IMPORT), lambda: list(demo.image.tasks()),
                     lambda: demo.image.get_task(task.id)):
            with pytest.raises(openstack.exceptions.ForbiddenException, match="tasks_api_access"):
                call()
    finally:
        demo.close()


def test_a_task_cannot_be_deleted_and_a_list_pages_by_marker(sdk) -> None:
    made = [sdk.image.create_task(type="import", input=IMPORT).id for _ in range(3)]
    answer = sdk.image.delete(f"/tasks/{made[0]}")
    assert answer.status_code == 405 and "not permitted on Glance Tasks" in answer.json()["message"]
    first = sdk.image.get("/tasks?limit=2&sort_dir=asc").json()
    second = sdk.image.get(f"/tasks?limit=2&sort_dir=asc&marker={first['tasks'][-1]['id']}").json()
    seen = [task["id"] for task in first["tasks"] + second["tasks"]]
    assert len(seen) == len(set(seen)) and "input" not in first["tasks"][0]
    assert sdk.image.get("/tasks?marker=nope").status_code == 400
    assert sdk.image.get("/tasks?status=done").json()["message"] == "Invalid status value: done"


def test_the_cli_lists_and_shows_tasks(live_cloud, sdk) -> None:
    task = sdk.image.create_task(type="import", input=IMPORT)
    listed = json.loads(live_cloud.cli("image", "task", "list", "-f", "json").stdout)
    assert task.id in {row["ID"] for row in listed}
    shown = json.loads(live_cloud.cli("image", "task", "show", task.id, "-f", "json").stdout)
    assert shown["status"] == "failure"
