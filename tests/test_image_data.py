"""Image data, members, visibility, protection and deactivation on a live server, as users meet them:
the `openstack` CLI, openstacksdk and raw HTTP for what the clients do not expose (ranges, a cut upload)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.test_api_image import login

MIB = 1024 * 1024


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def show(live_cloud, image: str, cloud: str = "tether") -> dict[str, Any]:
    return json.loads(live_cloud.cli("image", "show", image, "-f", "json", cloud=cloud).stdout)


def listed(live_cloud, cloud: str, *args: str) -> set[str]:
    rows = json.loads(live_cloud.cli("image", "list", *args, "-f", "json", cloud=cloud).stdout)
    return {row["ID"] for row in rows}


def high_water_mark_kib(pid: int) -> int:
    """The process's peak resident set size (VmHWM), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def generated(size: int) -> Iterator[bytes]:
    """``size`` bytes that differ from MiB to MiB, made a MiB at a time (never held whole)."""
    for offset in range(0, size, MIB):
        block = hashlib.sha512(offset.to_bytes(8, "big")).digest() * (MIB // 64)
        yield block[:min(MIB, size - offset)]


@pytest.fixture(scope="module")
def http(live_cloud):
    """Raw HTTP to /image/v2 as admin and as demo."""
    clients = {user: httpx.Client(base_url=f"{live_cloud.base_url}/image/v2", timeout=120,
                                  headers={"X-Auth-Token": login(live_cloud, user)})
               for user in ("admin", "demo")}
    yield clients
    for client in clients.values():
        client.close()


def new_image(client: httpx.Client, **body: Any) -> dict[str, Any]:
    response = client.post("/images", json={"name": unique("img"), "disk_format": "raw",
                                            "container_format": "bare", **body})
    assert response.status_code == 201, response.text
    return response.json()


def project_id(live_cloud, name: str) -> str:
    token = login(live_cloud, name)
    response = httpx.get(f"{live_cloud.base_url}/identity/v3/auth/tokens",
                         headers={"X-Auth-Token": token, "X-Subject-Token": token})
    return response.json()["token"]["project"]["id"]


# -- upload and download -----------------------------------------------------------------------


def test_cli_image_create_file_and_save_give_back_the_same_bytes(live_cloud, tmp_path) -> None:
    content = os.urandom(3 * MIB + 17)
    source = tmp_path / "disk.raw"
    source.write_bytes(content)
    name = unique("uploaded")
    live_cloud.cli("image", "create", "--file", str(source), "--disk-format", "raw", "--container-format", "bare",
                   name)
    image = show(live_cloud, name)
    assert (image["status"], image["size"]) == ("active", len(content))
    assert image["checksum"] == hashlib.md5(content).hexdigest()
    # the CLI shows glance's secure hash among the image's properties
    hashed = (image["properties"]["os_hash_algo"], image["properties"]["os_hash_value"])
    assert hashed == ("sha512", hashlib.sha512(content).hexdigest())
    saved = tmp_path / "saved.raw"
    live_cloud.cli("image", "save", "--file", str(saved), name)
    assert saved.read_bytes() == content
    # the bytes live under the data dir, and go with the image
    stored = live_cloud.data_dir / "images" / "store" / image["id"]
    assert stored.read_bytes() == content
    live_cloud.cli("image", "delete", name)
    assert not stored.exists()


def test_a_large_upload_and_download_stream_without_the_server_holding_the_image(live_cloud, http) -> None:
    size = 64 * MIB
    md5, sha512 = hashlib.md5(), hashlib.sha512()
    for chunk in generated(size):
        md5.update(chunk)
        sha512.update(chunk)
    image = new_image(http["admin"])
    pid = live_cloud.process.pid
    before = high_water_mark_kib(pid)
    response = http["admin"].put(f"/images/{image['id']}/file", content=generated(size),
                                 headers={"Content-Type": "application/octet-stream"})
    assert response.status_code == 204, response.text
    shown = http["admin"].get(f"/images/{image['id']}").json()
    assert (shown["status"], shown["size"], shown["checksum"], shown["os_hash_value"]) == (
        "active", size, md5.hexdigest(), sha512.hexdigest())
    downloaded, length = hashlib.sha512(), 0
    with http["admin"].stream("GET", f"/images/{image['id']}/file") as stream:
        assert stream.status_code == 200
        assert stream.headers["Content-MD5"] == md5.hexdigest()
        assert int(stream.headers["Content-Length"]) == size
        for chunk in stream.iter_bytes():
            downloaded.update(chunk)
            length += len(chunk)
    assert (length, downloaded.hexdigest()) == (size, sha512.hexdigest())
    # 64 MiB went in and out; the server's peak memory grew by far less than that
    assert high_water_mark_kib(pid) - before < 24 * 1024
    http["admin"].delete(f"/images/{image['id']}")


def test_a_range_of_the_data_is_answered_206_and_an_impossible_one_416(http) -> None:
    content = bytes(range(256)) * 4
    image = new_image(http["admin"])
    http["admin"].put(f"/images/{image['id']}/file", content=content,
                      headers={"Content-Type": "application/octet-stream"})
    part = http["admin"].get(f"/images/{image['id']}/file", headers={"Range": "bytes=10-19"})
    assert part.status_code == 206 and part.content == content[10:20]
    assert part.headers["Content-Range"] == f"bytes 10-19/{len(content)}"
    tail = http["admin"].get(f"/images/{image['id']}/file", headers={"Range": "bytes=-5"})
    assert tail.status_code == 206 and tail.content == content[-5:]
    beyond = http["admin"].get(f"/images/{image['id']}/file", headers={"Range": f"bytes={len(content)}-"})
    assert beyond.status_code == 416 and beyond.json()["code"] == 416


def test_upload_refusals_are_glances(http) -> None:
    image = new_image(http["admin"])
    url = f"/images/{image['id']}/file"
    wrong = http["admin"].put(url, content=b"x", headers={"Content-Type": "application/json"})
    assert wrong.status_code == 415 and wrong.json()["code"] == 415
    assert http["admin"].get(url).status_code == 204  # no data yet: glance's 204
    assert http["admin"].put(url, content=b"data", headers={"Content-Type": "application/octet-stream"}
                             ).status_code == 204
    again = http["admin"].put(url, content=b"more", headers={"Content-Type": "application/octet-stream"})
    assert again.status_code == 409
    assert again.json()["message"] == "Image status transition from active to saving is not allowed"
    formless = http["admin"].post("/images", json={"name": unique("formless")}).json()
    refused = http["admin"].put(f"/images/{formless['id']}/file", content=b"x",
                                headers={"Content-Type": "application/octet-stream"})
    assert refused.status_code == 400
    assert refused.json()["message"] == "Properties disk_format, container_format must be set prior to saving data."
    assert http["admin"].get(f"/images/{formless['id']}").json()["status"] == "queued"
    # another project's private image is not there at all for demo
    assert http["demo"].put(url, content=b"x", headers={"Content-Type": "application/octet-stream"}
                            ).status_code == 404


def test_an_interrupted_upload_leaves_the_image_queued_and_listed(live_cloud, http) -> None:
    image = new_image(http["admin"])
    base = urllib.parse.urlparse(live_cloud.base_url)
    token = http["admin"].headers["X-Auth-Token"]
    with socket.create_connection((base.hostname, base.port)) as sock:
        sock.sendall((f"PUT /image/v2/images/{image['id']}/file HTTP/1.1\r\nHost: {base.netloc}\r\n"
                      f"X-Auth-Token: {token}\r\nContent-Type: application/octet-stream\r\n"
                      f"Content-Length: {8 * MIB}\r\n\r\n").encode())
        sock.sendall(b"\0" * MIB)
        deadline = time.monotonic() + 10
        while http["admin"].get(f"/images/{image['id']}").json()["status"] != "saving":
            assert time.monotonic() < deadline
            time.sleep(0.05)
    deadline = time.monotonic() + 10
    while (shown := http["admin"].get(f"/images/{image['id']}").json())["status"] != "queued":
        assert time.monotonic() < deadline, shown
        time.sleep(0.05)
    assert shown["size"] is None and shown["checksum"] is None
    assert image["id"] in {row["id"] for row in http["admin"].get("/images", params={"limit": 1000}).json()["images"]}
    assert not list((live_cloud.data_dir / "images" / "store").glob(f"*{image['id']}*"))
    # and it can be uploaded again
    assert http["admin"].put(f"/images/{image['id']}/file", content=b"whole",
                             headers={"Content-Type": "application/octet-stream"}).status_code == 204
    assert http["admin"].get(f"/images/{image['id']}/file").content == b"whole"


# -- glance-direct import ----------------------------------------------------------------------


def test_glance_direct_import_through_openstacksdk(live_cloud, sdk, http) -> None:
    methods = http["demo"].get("/info/import").json()["import-methods"]
    assert methods["value"] == ["glance-direct"]
    content = os.urandom(MIB + 3)
    image = sdk.image.create_image(unique("imported"), disk_format="raw", container_format="bare",
                                   allow_duplicates=True)
    assert image.status == "queued"
    sdk.image.stage_image(image, data=content)
    assert sdk.image.get_image(image.id).status == "uploading"
    sdk.image.import_image(image, method="glance-direct")
    imported = sdk.image.wait_for_status(sdk.image.get_image(image.id), "active", wait=30)
    assert (imported.size, imported.checksum) == (len(content), hashlib.md5(content).hexdigest())
    assert imported.hash_value == hashlib.sha512(content).hexdigest()
    assert sdk.image.download_image(imported).content == content
    assert not (live_cloud.data_dir / "images" / "staging" / image.id).exists()


def test_import_refusals_are_glances(http) -> None:
    image = new_image(http["admin"])
    url = f"/images/{image['id']}/import"
    unstaged = http["admin"].post(url, json={"method": {"name": "glance-direct"}})
    assert unstaged.status_code == 409
    assert unstaged.json()["message"] == "Image needs to be staged before 'glance-direct' method can be used"
    web = http["admin"].post(url, json={"method": {"name": "web-download", "uri": "http://example.com/x"}})
    assert web.status_code == 400 and web.json()["message"] == "Unknown import method name 'web-download'."
    assert http["admin"].post(url, json={}).json()["message"] == "Import request requires a 'method' field."
    assert http["admin"].get(f"/images/{image['id']}").json()["status"] == "queued"


# -- members -----------------------------------------------------------------------------------


def test_members_share_accept_and_reject_through_the_cli(live_cloud, sdk, http) -> None:
    demo_project = project_id(live_cloud, "demo")
    name = unique("shared")
    live_cloud.cli("image", "create", "--shared", "--disk-format", "raw", "--container-format", "bare", name)
    image = show(live_cloud, name)
    assert image["id"] not in listed(live_cloud, "tether-demo")
    # (the CLI's `image add project` looks the project up in keystone first; the SDK names it by id)
    sdk.image.add_member(image["id"], member_id=demo_project)
    # a pending member sees the image but does not list it, unless it asks for pending ones
    assert show(live_cloud, image["id"], cloud="tether-demo")["name"] == name
    assert image["id"] not in listed(live_cloud, "tether-demo")
    pending = http["demo"].get("/images", params={"member_status": "pending"}).json()["images"]
    assert image["id"] in {row["id"] for row in pending}
    live_cloud.cli("image", "set", "--accept", image["id"], cloud="tether-demo")
    assert image["id"] in listed(live_cloud, "tether-demo")
    members = json.loads(live_cloud.cli("image", "member", "list", name, "-f", "json").stdout)
    assert [(row["Member ID"], row["Status"]) for row in members] == [(demo_project, "accepted")]
    # only the member answers (a non-admin owner may not), only the owner removes
    admin_project = project_id(live_cloud, "admin")
    demos = new_image(http["demo"], visibility="shared")
    assert http["demo"].post(f"/images/{demos['id']}/members", json={"member": admin_project}).status_code == 200
    owner_answers = http["demo"].put(f"/images/{demos['id']}/members/{admin_project}", json={"status": "accepted"})
    assert owner_answers.status_code == 403
    bad = http["demo"].put(f"/images/{image['id']}/members/{demo_project}", json={"status": "maybe"})
    assert bad.status_code == 400
    assert http["demo"].delete(f"/images/{image['id']}/members/{demo_project}").status_code == 403
    live_cloud.cli("image", "set", "--reject", image["id"], cloud="tether-demo")
    assert image["id"] not in listed(live_cloud, "tether-demo")
    sdk.image.remove_member(demo_project, image["id"])
    gone = live_cloud.cli("image", "show", image["id"], cloud="tether-demo", check=False)
    assert gone.returncode != 0
    again = http["admin"].post(f"/images/{image['id']}/members", json={"member": demo_project})
    assert again.status_code == 200 and again.json()["status"] == "pending"
    assert http["admin"].post(f"/images/{image['id']}/members", json={"member": demo_project}).status_code == 409


def test_only_shared_images_have_members(http) -> None:
    image = new_image(http["admin"], visibility="private")
    refused = http["admin"].post(f"/images/{image['id']}/members", json={"member": "someone"})
    assert refused.status_code == 403
    assert http["admin"].get(f"/images/{image['id']}/members").status_code == 403


# -- visibility, protection, deactivation ------------------------------------------------------


def test_what_a_non_admin_may_make_visible_and_see(live_cloud, http) -> None:
    public = live_cloud.cli("image", "create", "--public", unique("public"), cloud="tether-demo", check=False)
    assert public.returncode != 0 and "403" in public.stderr
    name = unique("community")
    live_cloud.cli("image", "create", "--community", name, cloud="tether-demo")
    community = show(live_cloud, name, cloud="tether-demo")
    assert community["visibility"] == "community"
    # another project sees a community image by id, but lists it only when asking for community images
    admin_private = new_image(http["admin"], visibility="private")
    admin_community = new_image(http["admin"], visibility="community")
    assert http["demo"].get(f"/images/{admin_private['id']}").status_code == 404
    assert http["demo"].get(f"/images/{admin_community['id']}").status_code == 200
    assert admin_community["id"] not in listed(live_cloud, "tether-demo")
    assert admin_community["id"] in listed(live_cloud, "tether-demo", "--community")
    # the owner's own change of visibility, but not to public
    live_cloud.cli("image", "set", "--private", name, cloud="tether-demo")
    assert show(live_cloud, name, cloud="tether-demo")["visibility"] == "private"
    assert live_cloud.cli("image", "set", "--public", name, cloud="tether-demo", check=False).returncode != 0
    live_cloud.cli("image", "set", "--public", community["id"])  # an admin may
    assert show(live_cloud, community["id"], cloud="tether-demo")["visibility"] == "public"


def test_a_protected_image_is_not_deleted_until_unprotected(live_cloud) -> None:
    name = unique("protected")
    live_cloud.cli("image", "create", "--protected", name)
    refused = live_cloud.cli("image", "delete", name, check=False)
    assert refused.returncode != 0
    assert show(live_cloud, name)["protected"] is True
    live_cloud.cli("image", "set", "--unprotected", name)
    live_cloud.cli("image", "delete", name)
    assert live_cloud.cli("image", "show", name, check=False).returncode != 0


def test_a_deactivated_image_is_downloaded_by_admins_only(live_cloud, http, tmp_path) -> None:
    source = tmp_path / "small.raw"
    source.write_bytes(b"deactivate me")
    name = unique("deactivated")
    live_cloud.cli("image", "create", "--file", str(source), "--disk-format", "raw", "--container-format", "bare",
                   name, cloud="tether-demo")
    image = show(live_cloud, name, cloud="tether-demo")
    live_cloud.cli("image", "set", "--deactivate", name, cloud="tether-demo")
    assert show(live_cloud, name, cloud="tether-demo")["status"] == "deactivated"
    refused = http["demo"].get(f"/images/{image['id']}/file")
    assert refused.status_code == 403
    assert refused.json()["message"] == ("The requested image has been deactivated. Image data download is "
                                         "forbidden.")
    assert http["admin"].get(f"/images/{image['id']}/file").content == b"deactivate me"
    queued = new_image(http["admin"])
    wrong = http["admin"].post(f"/images/{queued['id']}/actions/deactivate")
    assert wrong.status_code == 403 and wrong.json()["message"] == "Not allowed to deactivate image in status 'queued'"
    live_cloud.cli("image", "set", "--activate", name, cloud="tether-demo")
    assert http["demo"].get(f"/images/{image['id']}/file").content == b"deactivate me"


def test_a_hidden_image_is_left_out_of_the_default_list_but_shown_by_id(live_cloud, http) -> None:
    name = unique("hidden")
    live_cloud.cli("image", "create", name, cloud="tether-demo")
    image = show(live_cloud, name, cloud="tether-demo")
    assert image["id"] in listed(live_cloud, "tether-demo")
    live_cloud.cli("image", "set", "--hidden", image["id"], cloud="tether-demo")
    assert image["id"] not in listed(live_cloud, "tether-demo")
    hidden = http["demo"].get("/images", params={"os_hidden": "true"}).json()["images"]
    assert image["id"] in {row["id"] for row in hidden}
    live_cloud.cli("image", "set", "--unhidden", image["id"], cloud="tether-demo")
    assert image["id"] in listed(live_cloud, "tether-demo")
