"""Glance's metadata definitions catalog on a live server, through the `openstack` CLI and openstacksdk."""

from __future__ import annotations

import json
import uuid
from typing import Any

import openstack.exceptions
import pytest


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def cli_json(live_cloud, *args: str, cloud: str = "tether") -> Any:
    return json.loads(live_cloud.cli(*args, "-f", "json", cloud=cloud).stdout)


@pytest.fixture(scope="module")
def demo(live_cloud):
    connection = live_cloud.connect("tether-demo")
    yield connection
    connection.close()


def test_a_namespace_with_objects_properties_tags_and_a_resource_type(live_cloud, sdk) -> None:
    types = [row["Name"] for row in cli_json(live_cloud, "image", "metadef", "resource", "type", "list")]
    assert "OS::Glance::Image" in types
    name = unique("ns")
    live_cloud.cli("image", "metadef", "namespace", "create", "--public", "--protected", "--description", "why",
                   name)
    assert name in [row["namespace"] for row in cli_json(live_cloud, "image", "metadef", "namespace", "list")]
    live_cloud.cli("image", "metadef", "resource", "type", "association", "create", name, "OS::Glance::Image")
    associations = cli_json(live_cloud, "image", "metadef", "resource", "type", "association", "list", name)
    assert [row["Name"] for row in associations] == ["OS::Glance::Image"]
    live_cloud.cli("image", "metadef", "object", "create", "--namespace", name, "cpu")
    assert [row["name"] for row in cli_json(live_cloud, "image", "metadef", "object", "list", name)] == ["cpu"]
    live_cloud.cli("image", "metadef", "property", "create", "--name", "hw_cpu", "--title", "CPU",
                   "--type", "string", "--schema", json.dumps({"enum": ["a", "b"]}), name)
    shown = cli_json(live_cloud, "image", "metadef", "property", "show", name, "hw_cpu")
    assert (shown["title"], shown["type"], shown["enum"]) == ("CPU", "string", ["a", "b"])
    sdk.image.add_tag_to_metadef_namespace(name, "fast")
    namespace = sdk.image.get_metadef_namespace(name)
    assert namespace.is_protected and namespace.visibility == "public" and namespace.description == "why"
    assert [tag["name"] for tag in namespace.tags] == ["fast"]
    # protected: not deleted until unprotected
    refused = live_cloud.cli("image", "metadef", "namespace", "delete", name, check=False)
    assert refused.returncode != 0
    live_cloud.cli("image", "metadef", "namespace", "set", "--unprotected", name)
    live_cloud.cli("image", "metadef", "namespace", "delete", name)
    with pytest.raises(openstack.exceptions.NotFoundException):
        sdk.image.get_metadef_namespace(name)


def test_only_admins_define_and_private_namespaces_stay_private(sdk, demo) -> None:
    with pytest.raises(openstack.exceptions.ForbiddenException):
        demo.image.create_metadef_namespace(namespace=unique("mine"))
    public = sdk.image.create_metadef_namespace(namespace=unique("public"), visibility="public")
    private = sdk.image.create_metadef_namespace(namespace=unique("private"), visibility="private")
    seen = {namespace.namespace for namespace in demo.image.metadef_namespaces()}
    assert public.namespace in seen and private.namespace not in seen
    with pytest.raises(openstack.exceptions.NotFoundException):
        demo.image.get_metadef_namespace(private.namespace)
    with pytest.raises(openstack.exceptions.ForbiddenException):
        demo.image.create_metadef_object(public.namespace, name="theirs")
    with pytest.raises(openstack.exceptions.ConflictException):
        sdk.image.create_metadef_namespace(namespace=public.namespace)
    for namespace in (public, private):
        sdk.image.delete_metadef_namespace(namespace)


def test_the_metadefs_schemas_name_what_they_describe(sdk) -> None:
    assert sdk.image.get_metadef_namespace_schema().name == "namespace"
    assert sdk.image.get_metadef_resource_type_schema().name == "resource_type_association"
    assert sdk.image.get_metadef_tags_schema().name == "tags"
