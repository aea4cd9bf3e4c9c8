"""Request bodies as nova's JSON schemas define them, and their faults in nova's words.

Unknown fields are refused where nova's schema refuses them (400), types
are strict (a number is not a name), and fields that only exist from some
microversion on are unknown before it.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from typing import Annotated, Any, Literal, TypeVar

from fastapi.exceptions import RequestValidationError
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    RootModel,
    StrictInt,
    StrictStr,
    ValidationError,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from tether.api.versions import Microversion
from tether.domain.errors import compute as ce
from tether.domain.ids import is_uuid_like

M = TypeVar("M", bound=BaseModel)

# nova's parameter_types.valid_name_regex: printable, no leading or trailing whitespace.
_NAME = re.compile(r"^(?!\s)[^\x00-\x1f\x7f]*(?<!\s)$")
_METADATA_KEY = re.compile(r"^[a-zA-Z0-9-_:. ]{1,255}$")
_TAG = re.compile(r"^[^,/]*$")
# pydantic names a union's members in an error's location; they are no field names.
_TYPE_TAGS = frozenset({"int", "str", "float", "bool", "none", "list", "dict", "json-or-python"})
_BOOLEANS = {"true": True, "1": True, "on": True, "yes": True, "false": False, "0": False, "off": False, "no": False}


class JsonBody(RootModel[Any]):
    """Any JSON document: the handler checks it as nova's schema for that request does."""


class BadRequest(ce.ComputeBadRequest):
    """Nova's schema validation failure (HTTP 400)."""


def fail(reason: str) -> BadRequest:
    return BadRequest(reason=reason)


def unexpected(parent: str, name: str) -> BadRequest:
    return fail(f"Invalid input for field/attribute {parent}. Additional properties are not allowed "
                f"('{name}' was unexpected)")


def refusal(error: RequestValidationError) -> BadRequest:
    """A body or query string that a route's model refused, in nova's words (its first problem)."""
    problem = error.errors()[0]
    where, *loc = problem["loc"]
    if problem["type"] == "json_invalid":
        return fail(f"Malformed request body: {problem['ctx']['error']}")
    if where == "body" and not loc and problem["type"] == "missing":
        return fail("The request body is empty; a JSON object is required.")
    if where == "query":
        message = str(problem["msg"]).removeprefix("Value error, ")
        return fail(f"Invalid input for query parameters {loc[0]}. Value: {problem.get('input')}. {message}")
    return fail(_describe({**problem, "loc": tuple(loc)}))


def parse(model: type[M], data: Any) -> M:
    """Validate ``data`` against ``model``; the first problem becomes nova's 400 message."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise fail(_describe(error.errors(include_url=False)[0])) from None


def _describe(problem: dict[str, Any]) -> str:
    path = [part for part in problem["loc"] if isinstance(part, str) and "[" not in part and part not in _TYPE_TAGS]
    leaf = path[-1] if path else "body"
    parent = path[-2] if len(path) > 1 else "body"
    kind = problem["type"]
    if kind == "extra_forbidden":
        return (f"Invalid input for field/attribute {parent}. "
                f"Additional properties are not allowed ('{leaf}' was unexpected)")
    if kind == "missing":
        return f"Invalid input for field/attribute {parent}. '{leaf}' is a required property"
    message = str(problem["msg"]).removeprefix("Value error, ")
    return f"Invalid input for field/attribute {leaf}. Value: {problem.get('input')!r}. {message}"


# -- value types ------------------------------------------------------------------


def _uuid(value: str) -> str:
    if not is_uuid_like(value):
        raise ValueError(f"'{value}' is not a 'uuid'")
    return value


def _name(value: str) -> str:
    if not 1 <= len(value) <= 255:
        raise ValueError("must be 1 to 255 characters long")
    if not _NAME.match(value):
        raise ValueError("printable characters. Can not start or end with whitespace.")
    return value


def _tag(value: str) -> str:
    if not 1 <= len(value) <= 60 or not _TAG.match(value):
        raise ValueError("a tag is 1 to 60 characters, without ',' or '/'")
    return value


def _ip(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        raise ValueError(f"'{value}' is not valid under any of the given schemas") from None
    return value


def _boolean(value: bool | str) -> bool:
    if isinstance(value, bool):
        return value
    if value.lower() not in _BOOLEANS or value not in (value.lower(), value.upper(), value.capitalize()):
        raise ValueError(f"'{value}' is not one of the boolean values nova accepts")
    return _BOOLEANS[value.lower()]


def _counting(minimum: int) -> Any:
    def check(value: int | str) -> int:
        if isinstance(value, str):
            if not value.isdigit():
                raise ValueError(f"'{value}' does not match '^[0-9]*$'")
            value = int(value)
        if value < minimum:
            raise ValueError(f"{value} is less than the minimum of {minimum}")
        if value > 2**31 - 1:
            raise ValueError(f"{value} is greater than the maximum of {2**31 - 1}")
        return value

    return AfterValidator(check)


def is_base64(value: str) -> bool:
    """nova's 'base64' format: what ``base64.decodebytes`` takes (line breaks included), padding checked."""
    try:
        base64.decodebytes(value.encode("utf-8"))
    except (binascii.Error, ValueError):
        return False
    return True


def _base64(value: str) -> str:
    if not is_base64(value):
        raise ValueError(f"'{value[:40]}' is not a 'base64'")
    return value


def _user_data(value: str) -> str:
    if len(value) > 65535:
        raise ValueError(f"'{value[:40]}' is too long")
    return _base64(value)


def _metadata(value: dict[str, str]) -> dict[str, str]:
    for key, item in value.items():
        if not _METADATA_KEY.match(key):
            raise ValueError(f"Additional properties are not allowed ('{key}' was unexpected)")
        if len(item) > 255:
            raise ValueError(f"'{item[:40]}...' is too long")
    return value


Uuid = Annotated[StrictStr, AfterValidator(_uuid)]
Name = Annotated[StrictStr, AfterValidator(_name)]
Tag = Annotated[StrictStr, AfterValidator(_tag)]
IpAddress = Annotated[StrictStr, AfterValidator(_ip)]
Boolean = Annotated[bool | StrictStr, AfterValidator(_boolean)]
PositiveInteger = Annotated[StrictInt | StrictStr, _counting(1)]
NonNegativeInteger = Annotated[StrictInt | StrictStr, _counting(0)]
Metadata = Annotated[dict[StrictStr, StrictStr], AfterValidator(_metadata)]
Text255 = Annotated[StrictStr, Field(max_length=255)]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    def given(self) -> set[str]:
        """The fields the request named, by their wire names."""
        fields = type(self).model_fields
        return {fields[name].alias or name for name in self.model_fields_set}


# -- servers ------------------------------------------------------------------------


class NetworkRequest(Body):
    uuid: StrictStr | None = None
    port: Uuid | None = None
    fixed_ip: IpAddress | None = None
    tag: Tag | None = None


class BlockDeviceMapping(Body):
    source_type: Literal["volume", "image", "snapshot", "blank"] | None = None
    destination_type: Literal["local", "volume"] | None = None
    uuid: Annotated[StrictStr, Field(min_length=1, max_length=255, pattern=r"^[a-zA-Z0-9._-]*$")] | None = None
    image_id: Uuid | None = None
    volume_id: Uuid | None = None
    snapshot_id: Uuid | None = None
    volume_size: PositiveInteger | None = None
    boot_index: StrictInt | Annotated[StrictStr, Field(pattern=r"^-?[0-9]+$")] | None = None
    device_name: Annotated[StrictStr, Field(min_length=1, max_length=255, pattern=r"^[a-zA-Z0-9._/-]*$")] | None \
        = None
    delete_on_termination: Boolean | None = None
    guest_format: Text255 | None = None
    device_type: Text255 | None = None
    disk_bus: Text255 | None = None
    virtual_name: Text255 | None = None
    no_device: Any = None
    connection_info: Annotated[StrictStr, Field(max_length=16777215)] | None = None
    tag: Tag | None = None
    volume_type: Text255 | None = None


class _NetworksSchema:
    """The JSON schema of ``networks``: "auto", "none" or a list of network requests.

    Worked out when the OpenAPI document asks for it, not when the model is made at start-up.
    """

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {"anyOf": [{"type": "string", "enum": ["auto", "none"]},
                          {"type": "array", "items": NetworkRequest.model_json_schema()}]}


class SecurityGroupRef(Body):
    name: Name


class PersonalityFile(Body):
    """One file to inject (nova's personality, up to 2.56): a path and its base64 contents."""

    path: StrictStr
    contents: Annotated[StrictStr, AfterValidator(_base64)]


class ServerCreate(Body):
    name: Name
    flavorRef: Annotated[StrictStr, Field(min_length=1)] | StrictInt
    imageRef: StrictStr | None = None
    adminPass: StrictStr | None = None
    metadata: Metadata | None = None
    # "auto" | "none" | a list: checked by microversion in servers.py
    networks: Annotated[Any, _NetworksSchema()] = None
    disk_config: Literal["AUTO", "MANUAL"] | None = Field(None, alias="OS-DCF:diskConfig")
    accessIPv4: StrictStr | None = None
    accessIPv6: StrictStr | None = None
    personality: list[PersonalityFile] | None = None
    availability_zone: Name | None = None
    block_device_mapping: list[Any] | None = None
    block_device_mapping_v2: list[BlockDeviceMapping] | None = None
    config_drive: Boolean | None = None
    key_name: Name | None = None
    min_count: PositiveInteger | None = None
    max_count: PositiveInteger | None = None
    return_reservation_id: Boolean | None = None
    security_groups: list[SecurityGroupRef] | None = None
    user_data: Annotated[StrictStr, AfterValidator(_user_data)] | None = None
    description: Annotated[StrictStr, Field(max_length=255)] | None = None
    tags: Annotated[list[Tag], Field(max_length=50)] | None = None
    trusted_image_certificates: list[StrictStr] | None = None
    host: Text255 | None = None
    hypervisor_hostname: Text255 | None = None
    hostname: Text255 | None = None


class ServerCreateRequest(Body):
    server: ServerCreate
    scheduler_hints: dict[str, Any] | None = Field(None, alias="os:scheduler_hints")
    legacy_scheduler_hints: dict[str, Any] | None = Field(None, alias="OS-SCH-HNT:scheduler_hints")


# The microversions in which each optional server field exists (nova's create schemas).
SERVER_FIELDS_SINCE: dict[str, tuple[str, str | None]] = {
    "description": ("2.19", None),
    "tags": ("2.52", None),
    "personality": ("2.1", "2.56"),
    "trusted_image_certificates": ("2.63", None),
    "host": ("2.74", None),
    "hypervisor_hostname": ("2.74", None),
    "hostname": ("2.90", None),
}


def network_tag_allowed(version: Microversion) -> bool:
    """Nova had network tags in 2.32-2.36, dropped them in 2.37 and restored them in 2.42."""
    return version.within("2.32", "2.36") or version.at_least("2.42")


def bdm_tag_allowed(version: Microversion) -> bool:
    return version.within("2.32", "2.32") or version.at_least("2.42")


# -- interfaces -----------------------------------------------------------------------


class FixedIpRequest(Body):
    ip_address: IpAddress


class InterfaceAttachment(Body):
    net_id: Uuid | None = None
    port_id: Uuid | None = None
    fixed_ips: Annotated[list[FixedIpRequest], Field(min_length=1, max_length=1)] | None = None
    tag: Tag | None = None


class InterfaceAttachRequest(Body):
    interfaceAttachment: InterfaceAttachment | None = None


# -- flavors ----------------------------------------------------------------------------


def _flavor_id(value: str | int | float) -> str:
    text = str(value)
    if not 1 <= len(text) <= 255 or not re.match(r"^(?! )[a-zA-Z0-9. _-]+(?<! )$", text):
        raise ValueError(f"'{text}' does not match '^(?! )[a-zA-Z0-9. _-]+(?<! )$'")
    return text


def _rxtx(value: float | str) -> float:
    number = float(value) if isinstance(value, str) and re.match(r"^[0-9]+(\.[0-9]+)?$", value) else value
    if not isinstance(number, (int, float)) or isinstance(number, bool) or number <= 0:
        raise ValueError(f"{value!r} is not a positive number")
    return float(number)


class FlavorCreate(Body):
    name: Name
    id: Annotated[StrictStr | StrictInt | float, AfterValidator(_flavor_id)] | None = None
    ram: PositiveInteger
    vcpus: PositiveInteger
    disk: NonNegativeInteger
    ephemeral: NonNegativeInteger | None = Field(None, alias="OS-FLV-EXT-DATA:ephemeral")
    swap: NonNegativeInteger | None = None
    rxtx_factor: Annotated[float | StrictStr, AfterValidator(_rxtx)] | None = None
    is_public: Boolean | None = Field(None, alias="os-flavor-access:is_public")
    description: Annotated[StrictStr, Field(max_length=65535)] | None = None


class FlavorCreateRequest(Body):
    flavor: FlavorCreate


# -- external events ----------------------------------------------------------------------

NETWORK_EVENTS = ("network-changed", "network-vif-plugged", "network-vif-unplugged", "network-vif-deleted")
# Names nova knows from a microversion on; Tether has no volumes, accelerators or power events to act on.
LATER_EVENTS = {"volume-extended": "2.51", "power-update": "2.76", "accelerator-request-bound": "2.82",
                "volume-reimaged": "2.93"}


class ExternalEvent(Body):
    server_uuid: Uuid
    name: StrictStr
    status: Literal["failed", "completed", "in-progress"] = "completed"
    tag: Annotated[StrictStr, Field(max_length=255)] | None = None


class ExternalEventsRequest(Body):
    events: Annotated[list[ExternalEvent], Field(min_length=1)]


_HOSTNAME = re.compile(r"^[a-zA-Z0-9]+[a-zA-Z0-9-]*[a-zA-Z0-9]+$")
_FQDN = re.compile(r"^[a-zA-Z0-9-._]*$")


def hostname_field(value: Any, version: Microversion) -> str:
    """nova's hostname from 2.90 (a host name of 2-63 characters), a fully qualified name from 2.94."""
    if version.at_least("2.94"):
        ok = isinstance(value, str) and 1 <= len(value) <= 255 and bool(_FQDN.match(value))
    else:
        ok = isinstance(value, str) and 2 <= len(value) <= 63 and bool(_HOSTNAME.match(value))
    if not ok:
        raise fail(f"Invalid input for field/attribute hostname. Value: {value}. {value!r} is not a valid hostname")
    return value
