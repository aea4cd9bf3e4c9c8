"""The one hardware type Tether drives, ``fake-hardware``, and the interface implementations it has.

After ironic's ``drivers/fake_hardware.py`` and its entry points: each hardware
interface has the implementations enabled here (ironic's ``enabled_*_interfaces``
of a deployment that runs fake-hardware), and its default is the first of them,
as ironic's ``default_interface`` picks the first supported one that is enabled.
Tether acts on none of them differently: they are recorded and validated as ironic
records and validates them, so that tooling which sets them works unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.domain.errors import baremetal as be

HARDWARE_TYPE = "fake-hardware"

# interface type -> the enabled implementations, the default first.
INTERFACES: dict[str, tuple[str, ...]] = {
    "bios": ("fake", "no-bios"),
    "boot": ("fake",),
    "console": ("fake", "no-console"),
    "deploy": ("fake",),
    "firmware": ("fake", "no-firmware"),
    "inspect": ("fake", "no-inspect"),
    "management": ("fake",),
    # ironic defaults to flat when neutron hands out addresses, as Tether's network service does.
    "network": ("flat", "neutron", "noop"),
    "power": ("fake",),
    "raid": ("fake", "no-raid"),
    "rescue": ("fake", "no-rescue"),
    "storage": ("fake", "noop"),
    "vendor": ("fake", "no-vendor"),
}
INTERFACE_FIELDS = tuple(f"{kind}_interface" for kind in INTERFACES)

# ironic's boot_devices the fake management interface accepts (ironic's knows only pxe; Tether's
# fake BMC also keeps disk, the other device deployment tooling sets).
BOOT_DEVICES = ("pxe", "disk")

# What GET /v1/drivers/fake-hardware/properties answers: the union of its interfaces'
# get_properties(); ironic's fake vendor interfaces are the only ones that name any.
PROPERTIES = {
    "A1": "A1 description. Required.",
    "A2": "A2 description. Optional.",
    "B1": "B1 description. Required.",
    "B2": "B2 description. Required.",
}

# What GET /v1/drivers/fake-hardware/raid/logical_disk_properties answers: the descriptions of ironic's
# RAID configuration schema, which its fake RAID interface uses.
RAID_LOGICAL_DISK_PROPERTIES = {
    'raid_level': (
        "RAID level for the logical disk. Valid values are 'JBOD', '0', '1', '2', '5', '6', '1+0', '5+0' "
        "and '6+0'. Required."
    ),
    'size_gb': (
        "Size in GiB (Integer) for the logical disk. Use 'MAX' as size_gb if this logical disk is "
        'supposed to use the rest of the space available. Required.'
    ),
    'volume_name': (
        'Name of the volume to be created. If this is not specified, it will be auto-generated. Optional.'
    ),
    'is_root_volume': (
        'Specifies whether this disk is a root volume. By default, this is False. Optional.'
    ),
    'share_physical_disks': (
        'Specifies whether other logical disks can share physical disks with this logical disk. By '
        'default, this is False. Optional.'
    ),
    'disk_type': (
        "The type of disk preferred. Valid values are 'hdd' and 'ssd'. If this is not specified, disk "
        'type will not be a selection criterion for choosing backing physical disks. Optional.'
    ),
    'interface_type': (
        "The interface type of disk. Valid values are 'sata', 'scsi' and 'sas'. If this is not specified,"
        ' interface type will not be a selection criterion for choosing backing physical disks. Optional.'
    ),
    'number_of_physical_disks': (
        'Number of physical disks to use for this logical disk. By default, the driver uses the minimum '
        'number of disks required for that RAID level. Optional.'
    ),
    'controller': (
        'Controller to use for this logical disk. If not specified, the driver will choose a suitable '
        'RAID controller on the bare metal node. Optional.'
    ),
    'physical_disks': (
        'The physical disks to use for this logical disk. If not specified, the driver will choose '
        'suitable physical disks to use. Optional.'
    ),
}


def default_interfaces() -> dict[str, str]:
    """Every ``*_interface`` field at its default."""
    return {f"{kind}_interface": names[0] for kind, names in INTERFACES.items()}


def check_driver(driver: Any) -> str:
    if driver != HARDWARE_TYPE:
        raise be.DriverNotFound(driver_name=driver)
    return driver


def check_interface(field: str, value: Any) -> str:
    """``value`` if it names an enabled implementation of ``field``'s interface (InterfaceNotFoundInEntrypoint)."""
    kind = field.removesuffix("_interface")
    names = INTERFACES[kind]
    if value not in names:
        raise be.InterfaceNotFoundInEntrypoint(
            iface=value, entrypoint=f"ironic.hardware.interfaces.{kind}", valid=list(names))
    return str(value)


def interfaces_with_defaults(given: Mapping[str, Any]) -> dict[str, str]:
    """ironic's check_and_update_node_interfaces: the given implementations checked, the rest defaulted."""
    values = default_interfaces()
    for field in INTERFACE_FIELDS:
        if given.get(field) is not None:
            values[field] = check_interface(field, given[field])
    return values

# ironic's RAID configuration schema (drivers/raid_config_schema.json), which its fake RAID interface
# validates a node's target_raid_config against.
RAID_CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "logical_disks": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "raid_level": {"type": "string", "enum": ["JBOD", "0", "1", "2", "5", "6", "1+0", "5+0", "6+0"]},
                    "size_gb": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "enum": ["MAX"]}]},
                    "volume_name": {"type": "string"},
                    "is_root_volume": {"type": "boolean"},
                    "share_physical_disks": {"type": "boolean"},
                    "disk_type": {"type": "string", "enum": ["hdd", "ssd"]},
                    "interface_type": {"type": "string", "enum": ["sata", "scsi", "sas"]},
                    "number_of_physical_disks": {"type": "integer", "exclusiveMinimum": 0},
                    "controller": {"type": "string"},
                    "physical_disks": {"anyOf": [{"type": "array", "items": {"type": "string"}},
                                                 {"type": "array", "items": {"type": "object"}, "minItems": 2}]},
                },
                "required": ["raid_level", "size_gb"],
                "additionalProperties": False,
                "dependentRequired": {"physical_disks": ["controller"]},
            },
        },
    },
    "required": ["logical_disks"],
    "additionalProperties": False,
}
