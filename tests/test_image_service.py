"""The image service on both backends: glance's visibility rules, filters, paging, protection, validation."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from tether.domain.errors import image as errors
from tether.domain.ids import is_uuid_like
from tether.runtime.clock import VirtualClock
from tether.runtime.runtime import Runtime
from tether.services.context import RequestContext
from tether.services.image import ImageService
from tether.store import repos
from tether.store.database import Store

START = 1_767_225_600.0

ADMIN = RequestContext(user_id="u-admin", project_id="p-admin", roles=frozenset({"admin", "member", "reader"}))
ALICE = RequestContext(user_id="u-alice", project_id="p1", roles=frozenset({"member", "reader"}))
BOB = RequestContext(user_id="u-bob", project_id="p2", roles=frozenset({"member", "reader"}))
READER = RequestContext(user_id="u-reader", project_id="p1", roles=frozenset({"reader"}))

FORMATS = {"disk_format": "qcow2", "container_format": "bare"}


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(START)


@pytest.fixture
def images(database, clock) -> ImageService:
    runtime = Runtime(clock=clock)
    return ImageService(Store(database, runtime), runtime, random.Random(3))


async def count_images(images: ImageService) -> int:
    async with images.store.begin() as conn:
        return await repos.images.count(conn)


async def test_an_image_made_through_the_api_is_queued_private_and_owned(images) -> None:
    image = await images.create_image(ALICE, name="cirros", tags=["a", "b", "a"], properties={"os_distro": "cirros"})
    assert is_uuid_like(image.id)
    assert (image.status, image.visibility, image.owner) == ("queued", "private", "p1")
    assert (image.disk_format, image.container_format, image.size) == (None, None, None)
    assert image.tags == ["a", "b"] and image.properties == {"os_distro": "cirros"}
    assert image.created_at == image.updated_at == START
    assert await images.get_image(ALICE, image.id) == image


async def test_seeded_images_are_active_and_need_both_formats(images) -> None:
    image = await images.create_image(ADMIN, name="cirros", visibility="public", status="active", **FORMATS)
    assert image.status == "active"
    missing = "Property container_format must be set prior to saving data."
    with pytest.raises(errors.ImageBadRequest, match=re.escape(missing)):
        await images.create_image(ADMIN, name="half", status="active", disk_format="raw")
    with pytest.raises(errors.ImageBadRequest):
        await images.create_image(ADMIN, name="odd", status="killed", **FORMATS)
    assert await count_images(images) == 1


async def test_private_images_of_other_projects_are_not_found(images) -> None:
    private = await images.create_image(ALICE, name="mine")
    with pytest.raises(errors.ImageNotFound) as caught:
        await images.get_image(BOB, private.id)
    assert caught.value.status == 404 and str(caught.value) == f"No image found with ID {private.id}"
    assert (await images.get_image(ADMIN, private.id)).id == private.id
    shared = await images.create_image(ALICE, name="shared", visibility="shared")
    with pytest.raises(errors.ImageNotFound):
        await images.get_image(BOB, shared.id)
    with pytest.raises(errors.ImageNotFound):
        await images.get_image(ALICE, "cirros")  # a name is not an id: 404, so clients fall back to ?name=


async def test_public_images_are_visible_to_everyone_and_community_ones_only_on_request(images) -> None:
    public = await images.create_image(ADMIN, name="cirros", visibility="public", status="active", **FORMATS)
    community = await images.create_image(ALICE, name="alices-own", visibility="community")
    private = await images.create_image(ALICE, name="private")
    assert (await images.get_image(BOB, public.id)).id == public.id
    assert (await images.get_image(BOB, community.id)).id == community.id
    assert {i.id for i in await images.list_images(BOB)} == {public.id}
    assert {i.id for i in await images.list_images(BOB, visibility="community")} == {community.id}
    assert {i.id for i in await images.list_images(BOB, visibility="all")} == {public.id, community.id}
    assert {i.id for i in await images.list_images(ALICE)} == {public.id, community.id, private.id}
    assert {i.id for i in await images.list_images(ALICE, visibility="private")} == {private.id}
    assert {i.id for i in await images.list_images(ADMIN)} == {public.id, community.id, private.id}


async def test_only_admins_publicize_and_readers_cannot_create(images) -> None:
    with pytest.raises(errors.PolicyForbidden) as caught:
        await images.create_image(ALICE, name="everyone", visibility="public")
    assert caught.value.status == 403
    assert str(caught.value) == "You are not authorized to complete publicize_image action."
    with pytest.raises(errors.PolicyForbidden, match="add_image"):
        await images.create_image(READER, name="nope")
    image = await images.create_image(ALICE, name="mine")
    with pytest.raises(errors.PolicyForbidden, match="publicize_image"):
        await images.update_image(ALICE, image.id, visibility="public")
    assert (await images.update_image(ADMIN, image.id, visibility="public")).visibility == "public"
    assert await count_images(images) == 1


async def test_list_filters_by_name_ids_status_and_owner(images, clock) -> None:
    made = []
    for n, (ctx, name) in enumerate([(ALICE, "cirros"), (ALICE, "ubuntu"), (ADMIN, "cirros"), (ALICE, "fedora")]):
        clock.advance_to(START + n)
        visibility = "public" if ctx is ADMIN else "private"
        made.append(await images.create_image(ctx, name=name, visibility=visibility, status="active", **FORMATS))
    alice_cirros, ubuntu, admin_cirros, fedora = made
    assert [i.id for i in await images.list_images(ALICE, name="cirros")] == [admin_cirros.id, alice_cirros.id]
    assert [i.id for i in await images.list_images(BOB, name="cirros")] == [admin_cirros.id]
    assert [i.id for i in await images.list_images(ALICE, ids=[ubuntu.id, fedora.id, "0" * 8])] == [
        fedora.id, ubuntu.id,
    ]
    assert [i.id for i in await images.list_images(BOB, ids=[ubuntu.id, admin_cirros.id])] == [admin_cirros.id]
    assert await images.list_images(ALICE, ids=[]) == []
    assert [i.id for i in await images.list_images(ALICE, owner="p-admin")] == [admin_cirros.id]
    assert await images.list_images(ALICE, status="queued") == []
    assert [i.name for i in await images.list_images(ALICE)] == ["fedora", "cirros", "ubuntu", "cirros"]


async def test_list_pages_with_limit_and_marker(images, clock) -> None:
    made = []
    for n in range(5):
        clock.advance_to(START + n)
        made.append(await images.create_image(ALICE, name=f"img{n}"))
    newest_first = [i.id for i in reversed(made)]
    page = await images.list_images(ALICE, limit=2)
    assert [i.id for i in page] == newest_first[:2]
    page = await images.list_images(ALICE, limit=2, marker=page[-1].id)
    assert [i.id for i in page] == newest_first[2:4]
    page = await images.list_images(ALICE, limit=2, marker=page[-1].id)
    assert [i.id for i in page] == newest_first[4:]
    with pytest.raises(errors.ImageBadRequest, match="No image found with ID"):
        await images.list_images(BOB, marker=made[0].id)  # not Bob's to see
    with pytest.raises(errors.ImageBadRequest, match="limit param must be positive"):
        await images.list_images(ALICE, limit=-1)
    with pytest.raises(errors.ImageBadRequest) as caught:
        await images.list_images(ALICE, visibility="everyone")
    assert caught.value.status == 400 and str(caught.value) == "Invalid visibility value: everyone"


async def test_protected_images_cannot_be_deleted(images) -> None:
    image = await images.create_image(ALICE, name="precious", protected=True)
    with pytest.raises(errors.ProtectedImageDelete) as caught:
        await images.delete_image(ALICE, image.id)
    assert caught.value.status == 403
    assert str(caught.value) == f"Image {image.id} is protected and cannot be deleted."
    assert (await images.get_image(ALICE, image.id)).protected
    await images.update_image(ALICE, image.id, protected=False)
    await images.delete_image(ALICE, image.id)
    with pytest.raises(errors.ImageNotFound):
        await images.get_image(ALICE, image.id)
    with pytest.raises(errors.ImageNotFound):
        await images.delete_image(ALICE, image.id)


async def test_others_may_not_change_or_delete_an_image(images) -> None:
    public = await images.create_image(ADMIN, name="cirros", visibility="public", status="active", **FORMATS)
    private = await images.create_image(ALICE, name="mine")
    with pytest.raises(errors.PolicyForbidden, match="delete_image"):
        await images.delete_image(BOB, public.id)
    with pytest.raises(errors.PolicyForbidden, match="modify_image"):
        await images.update_image(BOB, public.id, name="hijacked")
    with pytest.raises(errors.ImageNotFound):
        await images.delete_image(BOB, private.id)
    with pytest.raises(errors.PolicyForbidden, match="delete_image"):
        await images.delete_image(READER, private.id)
    assert (await images.get_image(BOB, public.id)).name == "cirros"
    await images.delete_image(ADMIN, private.id)
    assert await count_images(images) == 1


BAD_INPUT: dict[str, tuple[dict[str, Any], str]] = {
    "disk format": ({"disk_format": "floppy"}, "Provided object does not match schema 'image': 'floppy' is not one "
                    "of [None, 'ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop']"),
    "container format": ({"container_format": "zip"}, "'zip' is not one of [None, 'ami', 'ari', 'aki', 'bare', "
                         "'ovf', 'ova', 'docker', 'compressed']"),
    "visibility": ({"visibility": "everyone"},
                   "'everyone' is not one of ['public', 'private', 'shared', 'community']"),
    "min_disk": ({"min_disk": -1}, "-1 is less than the minimum of 0"),
    "min_ram": ({"min_ram": "lots"}, "'lots' is not of type 'integer'"),
    "id": ({"id": "not-a-uuid"}, "'not-a-uuid' does not match"),
    "name": ({"name": "x" * 256}, "is too long"),
    "protected": ({"protected": "yes"}, "'yes' is not of type 'boolean'"),
    "property value": ({"properties": {"os_distro": 7}}, "7 is not of type 'string'"),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
async def test_bad_input_is_400_in_glances_words_and_creates_nothing(images, case: str) -> None:
    fields, words = BAD_INPUT[case]
    with pytest.raises(errors.ImageBadRequest) as caught:
        await images.create_image(ALICE, **{"name": "bad", **fields})
    assert caught.value.status == 400
    assert str(caught.value).startswith("Provided object does not match schema 'image': ")
    assert words in str(caught.value)
    assert await count_images(images) == 0


async def test_reserved_and_read_only_attributes_are_403(images) -> None:
    with pytest.raises(errors.ReservedAttribute, match=re.escape("Attribute 'os_glance_importing' is reserved.")):
        await images.create_image(ALICE, properties={"os_glance_importing": "x"})
    with pytest.raises(errors.ReadOnlyAttribute, match=re.escape("Attribute 'status' is read-only.")):
        await images.create_image(ALICE, properties={"status": "active"})
    image = await images.create_image(ALICE, name="x")
    with pytest.raises(errors.ReadOnlyAttribute) as caught:
        await images.update_image(ALICE, image.id, status="active")
    assert caught.value.status == 403
    assert await count_images(images) == 1
    assert (await images.get_image(ALICE, image.id)).status == "queued"


async def test_update_changes_what_it_is_given_and_only_that(images, clock) -> None:
    image = await images.create_image(ALICE, name="draft", tags=["old"], properties={"a": "1", "b": "2"})
    clock.advance_to(START + 10)
    updated = await images.update_image(ALICE, image.id, name="final", tags=["new"], min_ram=512,
                                        properties={"a": None, "c": "3"}, disk_format="raw")
    assert (updated.name, updated.tags, updated.min_ram, updated.disk_format) == ("final", ["new"], 512, "raw")
    assert updated.properties == {"b": "2", "c": "3"}
    assert updated.updated_at == START + 10 and updated.created_at == START
    assert await images.get_image(ALICE, image.id) == updated
    with pytest.raises(errors.InvalidImageObject):
        await images.update_image(ALICE, image.id, name="ok", container_format="zip")
    assert (await images.get_image(ALICE, image.id)).name == "final"


async def test_formats_change_only_while_queued(images) -> None:
    image = await images.create_image(ADMIN, name="cirros", status="active", **FORMATS)
    with pytest.raises(errors.ImageForbidden) as caught:
        await images.update_image(ADMIN, image.id, disk_format="raw")
    assert str(caught.value) == "Attribute disk_format can be only replaced for a queued image."
    assert (await images.update_image(ADMIN, image.id, disk_format="qcow2")).disk_format == "qcow2"
    assert (await images.get_image(ADMIN, image.id)).disk_format == "qcow2"


async def test_an_id_is_used_once(images) -> None:
    image = await images.create_image(ALICE, id="2f0f1ab4-6c1e-4b0a-9d7c-1f2e3d4c5b6a", name="first")
    assert image.id == "2f0f1ab4-6c1e-4b0a-9d7c-1f2e3d4c5b6a"
    with pytest.raises(errors.ImageConflict) as caught:
        await images.create_image(BOB, id=image.id, name="second")
    assert caught.value.status == 409 and image.id in str(caught.value)
    assert (await images.get_image(ADMIN, image.id)).name == "first"


async def chunks(*parts: bytes):
    for part in parts:
        yield part


async def test_a_transfer_that_died_with_the_process_is_queued_again_on_recovery(images) -> None:
    image = await images.create_image(ALICE, name="cut", **FORMATS)
    async with images.store.begin() as conn:
        await repos.images.update(conn, image.id, status="saving")  # as a crash mid-upload leaves it
    await images.recover()
    assert (await images.get_image(ALICE, image.id)).status == "queued"
    uploaded = await images.data.upload(ALICE, image.id, chunks(b"ab", b"cd"))
    assert (uploaded.status, uploaded.size, uploaded.os_hash_algo) == ("active", 4, "sha512")


async def test_a_shared_image_is_seen_by_members_and_listed_once_accepted(images) -> None:
    shared = await images.create_image(ALICE, name="shared", visibility="shared")
    await images.members.add(ALICE, shared.id, BOB.project_id)
    assert (await images.get_image(BOB, shared.id)).id == shared.id
    assert shared.id not in {image.id for image in await images.list_images(BOB)}
    assert shared.id in {image.id for image in await images.list_images(BOB, member_status="pending")}
    await images.members.set_status(BOB, shared.id, BOB.project_id, "accepted")
    assert shared.id in {image.id for image in await images.list_images(BOB)}
    with pytest.raises(errors.ImageForbidden):
        await images.members.set_status(ALICE, shared.id, BOB.project_id, "rejected")
    await images.delete_image(ALICE, shared.id)
    async with images.store.begin() as conn:
        assert await repos.image_members.count(conn) == 0  # members go with their image
