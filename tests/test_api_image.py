"""Glance's v2 API on the live server, driven by openstacksdk, the openstack CLI and raw HTTP."""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

import httpx
import jsonschema
import openstack.exceptions
import pytest

from tether.seeding import CIRROS_CONTENT

PATCH = "application/openstack-images-v2.1-json-patch"
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
GLANCE_KEYS = {"id", "name", "status", "visibility", "protected", "tags", "disk_format", "container_format",
               "min_disk", "min_ram", "size", "checksum", "owner", "created_at", "updated_at", "self", "file",
               "schema", "os_hidden"}


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def login(live_cloud, user: str) -> str:
    body = {"auth": {"identity": {"methods": ["password"], "password": {
        "user": {"name": user, "domain": {"name": "Default"}, "password": user}}},
        "scope": {"project": {"name": user, "domain": {"name": "Default"}}}}}
    response = httpx.post(f"{live_cloud.base_url}/identity/v3/auth/tokens", json=body)
    assert response.status_code == 201
    return response.headers["X-Subject-Token"]


class Glance:
    """Raw HTTP to /image/v2 as one user."""

    def __init__(self, live_cloud, user: str) -> None:
        self.client = httpx.Client(base_url=f"{live_cloud.base_url}/image/v2",
                                   headers={"X-Auth-Token": login(live_cloud, user)})

    def create(self, **body: Any) -> dict[str, Any]:
        response = self.client.post("/images", json={"name": unique("img"), **body})
        assert response.status_code == 201, response.text
        return response.json()

    def patch(self, image_id: str, ops: Any, media_type: str = PATCH) -> httpx.Response:
        return self.client.patch(f"/images/{image_id}", json=ops, headers={"content-type": media_type})

    def list(self, **params: Any) -> dict[str, Any]:
        response = self.client.get("/images", params=params)
        assert response.status_code == 200, response.text
        return response.json()

    def error(self, response: httpx.Response, status: int) -> str:
        assert response.status_code == status, response.text
        body = response.json()
        assert body["code"] == status and body["title"]
        return body["message"]


@pytest.fixture(scope="module")
def admin(live_cloud):
    glance = Glance(live_cloud, "admin")
    yield glance
    glance.client.close()


@pytest.fixture(scope="module")
def demo_http(live_cloud):
    glance = Glance(live_cloud, "demo")
    yield glance
    glance.client.close()


@pytest.fixture(scope="module")
def demo(live_cloud):
    connection = live_cloud.connect("tether-demo")
    yield connection
    connection.close()


@pytest.fixture
def scratch(admin):
    """Images made by the test, deleted after it (unprotected first)."""
    made: list[str] = []
    yield made
    for image_id in made:
        admin.patch(image_id, [{"op": "replace", "path": "/protected", "value": False}])
        admin.client.delete(f"/images/{image_id}")


# -- finding images ------------------------------------------------------------------------


def test_the_sdk_finds_cirros_by_name_and_by_id(sdk, admin) -> None:
    (cirros,) = list(sdk.image.images(name="cirros"))
    assert (cirros.status, cirros.visibility, cirros.disk_format) == ("active", "public", "qcow2")
    assert sdk.image.get_image(cirros.id).name == "cirros"
    assert sdk.image.find_image("cirros").id == cirros.id
    with pytest.raises(openstack.exceptions.NotFoundException):
        sdk.image.get_image("cirros")  # a name is not an id: 404, then the client asks ?name=
    raw = admin.client.get(f"/images/{cirros.id}").json()
    assert set(raw) >= GLANCE_KEYS and raw["os_hidden"] is False
    # the seeded image has real data: its size and hashes are those of its bytes
    assert raw["size"] == len(CIRROS_CONTENT) and raw["checksum"] == hashlib.md5(CIRROS_CONTENT).hexdigest()
    assert (raw["os_hash_algo"], raw["os_hash_value"]) == ("sha512", hashlib.sha512(CIRROS_CONTENT).hexdigest())
    assert raw["self"] == f"/v2/images/{cirros.id}" and raw["file"] == f"/v2/images/{cirros.id}/file"
    assert raw["schema"] == "/v2/schemas/image"
    assert TIMESTAMP.match(raw["created_at"]) and TIMESTAMP.match(raw["updated_at"])
    missing = admin.client.get("/images/cirros")
    assert admin.error(missing, 404) == "No image found with ID cirros"
    assert admin.client.get(f"/images/{cirros.id}/file").content == CIRROS_CONTENT
    assert admin.client.get(f"/images/{uuid.uuid4()}/file").status_code == 404


def test_the_in_operator_lists_exactly_the_ids_asked_for(admin, scratch) -> None:
    made = [admin.create(visibility="private")["id"] for _ in range(3)]
    scratch.extend(made)
    listed = admin.list(id=f"in:{made[0]},{made[2]}")
    assert sorted(image["id"] for image in listed["images"]) == sorted([made[0], made[2]])
    assert listed["first"].startswith("/v2/images?id=in") and listed["schema"] == "/v2/schemas/images"
    assert [image["id"] for image in admin.list(id=made[1])["images"]] == [made[1]]
    assert admin.error(admin.client.get("/images", params={"name": "like:cirros"}), 400) == \
        "Unable to filter by unknown operator 'like'."


def test_filters_on_status_visibility_tags_and_custom_properties(admin, scratch) -> None:
    tag = unique("tag")
    queued = admin.create(visibility="private", tags=[tag], os_distro="cirros", architecture="x86_64")
    other = admin.create(visibility="community", tags=[tag, "extra"], os_distro="ubuntu")
    scratch.extend([queued["id"], other["id"]])
    assert {i["id"] for i in admin.list(tag=tag)["images"]} == {queued["id"], other["id"]}
    assert [i["id"] for i in admin.client.get("/images", params=[("tag", tag), ("tag", "extra")]).json()[
        "images"]] == [other["id"]]
    assert [i["id"] for i in admin.list(tag=tag, os_distro="ubuntu")["images"]] == [other["id"]]
    assert [i["id"] for i in admin.list(tag=tag, visibility="community")["images"]] == [other["id"]]
    assert [i["id"] for i in admin.list(tag=tag, status="queued", sort_key="name", sort_dir="asc")["images"]] == \
        sorted([queued["id"], other["id"]], key=lambda i: {queued["id"]: queued, other["id"]: other}[i]["name"])
    assert admin.list(tag=tag, status="active")["images"] == []
    assert admin.list(tag=tag, os_hidden="true")["images"] == []
    assert queued["os_distro"] == "cirros" and queued["architecture"] == "x86_64"
    assert admin.error(admin.client.get("/images", params={"visibility": "everyone"}), 400) == \
        "Invalid visibility value: everyone"
    assert admin.error(admin.client.get("/images", params={"limit": "many"}), 400) == \
        "limit param must be an integer"
    assert admin.error(admin.client.get("/images", params={"sort_key": "colour"}), 400).startswith(
        "Invalid sort key: colour.")
    assert admin.error(admin.client.get("/images", params={"marker": str(uuid.uuid4())}), 400).startswith(
        "No image found with ID")


def test_pages_follow_next_until_the_list_ends(sdk, admin, scratch) -> None:
    tag = unique("page")
    made = [admin.create(visibility="private", tags=[tag])["id"] for _ in range(5)]
    scratch.extend(made)
    first = admin.list(tag=tag, limit=2)
    assert len(first["images"]) == 2 and first["next"].startswith("/v2/images?")
    assert "marker=" in first["next"] and "marker" not in first["first"]
    seen = [image["id"] for image in first["images"]]
    following = first["next"]
    while following:
        page = admin.client.get(following.removeprefix("/v2")).json()
        seen += [image["id"] for image in page["images"]]
        following = page.get("next")
    assert sorted(seen) == sorted(made) and len(seen) == 5  # newest first, each once
    # the SDK follows "next" as well
    assert sorted(image.id for image in sdk.image.images(tag=tag, limit=2)) == sorted(made)


# -- changing images ------------------------------------------------------------------------


def test_an_image_is_created_patched_and_deleted_through_the_sdk(sdk, admin, scratch) -> None:
    name = unique("sdk")
    image = sdk.image.create_image(name=name, allow_duplicates=True, visibility="private", tags=["one"],
                                   os_distro="cirros")
    scratch.append(image.id)
    assert (image.status, image.visibility, image.tags) == ("queued", "private", ["one"])
    assert image.os_distro == "cirros" and image.owner == sdk.current_project_id
    changed = sdk.image.update_image(image, name=f"{name}-b", min_ram=128, os_distro="fedora")
    assert (changed.name, changed.min_ram, changed.os_distro) == (f"{name}-b", 128, "fedora")
    # tags one at a time (glance's tag API, which `openstack image unset --tag` uses)
    sdk.image.add_tag(image, "two")
    sdk.image.remove_tag(image, "one")
    assert sdk.image.get_image(image.id).tags == ["two"]
    with pytest.raises(openstack.exceptions.NotFoundException):
        sdk.image.remove_tag(image, "one")
    sdk.image.delete_image(image)
    assert sdk.image.find_image(image.id) is None


def test_patch_operations_as_glance_applies_them(admin, scratch) -> None:
    image = admin.create(visibility="private", hw_disk_bus="scsi")
    scratch.append(image["id"])
    response = admin.patch(image["id"], [
        {"op": "replace", "path": "/name", "value": "renamed"},
        {"op": "add", "path": "/hw_vif_model", "value": "virtio"},
        {"op": "remove", "path": "/hw_disk_bus"},
        {"op": "replace", "path": "/tags", "value": ["a", "b", "a"]},
        {"op": "add", "path": "/protected", "value": True},
        {"op": "replace", "path": "/visibility", "value": "community"},
    ])
    assert response.status_code == 200, response.text
    patched = response.json()
    assert (patched["name"], patched["hw_vif_model"], patched["tags"]) == ("renamed", "virtio", ["a", "b"])
    assert "hw_disk_bus" not in patched and patched["protected"] is True and patched["visibility"] == "community"
    assert admin.client.get(f"/images/{image['id']}").json() == patched

    assert admin.error(admin.client.delete(f"/images/{image['id']}"), 403) == \
        f"Image {image['id']} is protected and cannot be deleted."
    unprotect = admin.patch(image["id"], [{"op": "replace", "path": "/protected", "value": False}])
    assert unprotect.status_code == 200
    assert admin.client.delete(f"/images/{image['id']}").status_code == 204
    assert admin.client.get(f"/images/{image['id']}").status_code == 404


def test_bad_patches_are_refused_in_glances_words_and_change_nothing(admin, scratch) -> None:
    image = admin.create(visibility="private")
    scratch.append(image["id"])
    wrong_type = admin.patch(image["id"], [], media_type="application/json-patch+json")
    assert wrong_type.status_code == 415 and PATCH in wrong_type.headers["accept-patch"]
    cases = [
        ([{"op": "move", "path": "/name"}], 400,
         "Invalid operation: `move`. It must be one of the following: add, remove, replace."),
        ([{"op": "replace", "path": "/status", "value": "active"}], 403, "Attribute 'status' is read-only."),
        ([{"op": "add", "path": "/os_glance_secret", "value": "x"}], 403, "Attribute 'os_glance_secret' is reserved."),
        ([{"op": "remove", "path": "/name"}], 403, "Property name may not be removed."),
        ([{"op": "replace", "path": "/nonexistent", "value": "x"}], 409, "Property nonexistent does not exist."),
        ([{"op": "remove", "path": "/nonexistent"}], 409, "Property nonexistent does not exist."),
        ([{"op": "replace", "path": "/name"}], 400, 'Operation "replace" requires a member named "value".'),
        ([{"op": "replace", "path": "/tags/0", "value": "x"}], 400,
         "Invalid JSON pointer for this resource: '/tags/0'"),
        ([{"op": "replace", "path": "name", "value": "x"}], 400, 'Pointer `name` does not start with "/".'),
        ({"op": "replace"}, 400, "Request body must be a JSON array of operation objects."),
    ]
    for ops, status, message in cases:
        assert admin.error(admin.patch(image["id"], ops), status) == message, ops
    bad_value = admin.patch(image["id"], [{"op": "replace", "path": "/min_ram", "value": "lots"}])
    assert admin.error(bad_value, 400).startswith("Provided object does not match schema 'image'")
    # all or nothing: the rename before the refused removal did not happen
    half = admin.patch(image["id"], [{"op": "replace", "path": "/name", "value": "half"},
                                     {"op": "remove", "path": "/nonexistent"}])
    assert half.status_code == 409
    assert admin.client.get(f"/images/{image['id']}").json()["name"] == image["name"]
    older = admin.patch(image["id"], [{"add": "/hw_rng_model", "value": "virtio"}],
                        media_type="application/openstack-images-v2.0-json-patch")
    assert older.status_code == 200 and older.json()["hw_rng_model"] == "virtio"
    again = admin.patch(image["id"], [{"add": "/hw_rng_model", "value": "virtio"}],
                        media_type="application/openstack-images-v2.0-json-patch")
    assert admin.error(again, 409) == "Property hw_rng_model already present."


def test_bad_create_bodies_are_refused_in_glances_words(admin) -> None:
    cases = [
        ({"name": "x", "self": "/v2/images/y"}, 403, "Attribute 'self' is read-only."),
        ({"name": "x", "status": "active"}, 403, "Attribute 'status' is read-only."),
        ({"name": "x", "deleted": "no"}, 403, "Attribute 'deleted' is reserved."),
        ({"name": "x", "visibility": "everyone"}, 400, None),
        ({"name": "x", "min_disk": -1}, 400, None),
        ({"name": "x", "os_distro": 7}, 400, None),
        ({"name": "x", "id": "not-a-uuid"}, 400, None),
    ]
    for body, status, message in cases:
        text = admin.error(admin.client.post("/images", json=body), status)
        if message is not None:
            assert text == message, body
        else:
            assert text.startswith("Provided object does not match schema 'image'"), (body, text)
    assert admin.error(admin.client.post("/images", content=b"", headers={"content-type": "application/json"}),
                       400) == "Body expected in request."
    assert not [i for i in admin.list(name="x")["images"]]


# -- who sees what ----------------------------------------------------------------------------


def test_private_images_stay_in_their_project_and_public_ones_are_for_everyone(
        sdk, demo, demo_http, admin, scratch) -> None:
    private = admin.create(visibility="private")
    scratch.append(private["id"])
    assert demo_http.error(demo_http.client.get(f"/images/{private['id']}"), 404) == \
        f"No image found with ID {private['id']}"
    assert private["id"] not in {image.id for image in demo.image.images()}
    assert demo.image.find_image("cirros") is not None

    mine = demo_http.create()
    scratch.append(mine["id"])
    assert mine["visibility"] == "shared" and mine["owner"] == demo.current_project_id
    assert sdk.image.get_image(mine["id"]).owner == demo.current_project_id  # admins see every image
    refused = demo_http.patch(mine["id"], [{"op": "replace", "path": "/visibility", "value": "public"}])
    assert demo_http.error(refused, 403) == "You are not authorized to complete publicize_image action."
    cirros = sdk.image.find_image("cirros")
    forbidden = demo_http.patch(cirros.id, [{"op": "replace", "path": "/name", "value": "mine"}])
    assert demo_http.error(forbidden, 403) == "You are not authorized to complete modify_image action."
    assert demo_http.error(demo_http.client.delete(f"/images/{cirros.id}"), 403).endswith("delete_image action.")
    someone_else = demo_http.client.post("/images", json={"name": "x", "owner": "someone-else"})
    assert demo_http.error(someone_else, 403) == "You are not permitted to create images owned by 'someone-else'."


def test_a_request_without_a_token_gets_401_in_glances_envelope(live_cloud) -> None:
    response = httpx.get(f"{live_cloud.base_url}/image/v2/images")
    assert response.status_code == 401 and response.json()["code"] == 401


# -- schemas and the CLI -----------------------------------------------------------------------


def test_the_schemas_describe_what_the_api_returns(admin) -> None:
    image_schema = admin.client.get("/schemas/image").json()
    images_schema = admin.client.get("/schemas/images").json()
    assert image_schema["name"] == "image" and images_schema["name"] == "images"
    listing = admin.list()
    jsonschema.validate(listing, images_schema)
    for image in listing["images"]:
        jsonschema.validate(image, image_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**listing["images"][0], "min_ram": "lots"}, image_schema)


def test_the_cli_lists_images_and_shows_cirros(live_cloud, sdk) -> None:
    listed = live_cloud.cli("image", "list", "-f", "value", "-c", "Name", "-c", "Status").stdout.splitlines()
    assert "cirros active" in listed
    shown = live_cloud.cli("image", "show", "cirros", "-f", "value", "-c", "id").stdout.strip()
    assert shown == sdk.image.find_image("cirros").id
