"""Bare-metal (ironic) errors, in ironic's words."""

from __future__ import annotations

from tether.domain.errors import TetherError


class BaremetalError(TetherError):
    service = "baremetal"
    status = 500


class Invalid(BaremetalError):
    status = 400
    template = "{reason}"


class NotFound(BaremetalError):
    status = 404


class Conflict(BaremetalError):
    status = 409


class NodeNotFound(NotFound):
    template = "Node {node} could not be found."


class PortNotFound(NotFound):
    template = "Port {port} could not be found."


class PortgroupNotFound(NotFound):
    template = "Portgroup {portgroup} could not be found."


class ChassisNotFound(NotFound):
    template = "Chassis {chassis} could not be found."


class NoFreePhysicalPorts(Invalid):
    template = "Unable to attach VIF {vif}, not enough free physical ports."


class VifNotAttached(Invalid):
    template = "Unable to detach VIF {vif} from node {node} because it is not attached to it."


class VifAlreadyAttached(Conflict):
    template = (
        "Unable to attach VIF because VIF {vif} is already attached to Ironic "
        "{object_type} {object_uuid}"
    )


class PortgroupPhysnetInconsistent(Invalid):
    template = (
        "Port group {portgroup} has member ports with inconsistent physical networks "
        "({physical_networks}). All ports in a port group must have the same physical network."
    )


class InvalidStateRequested(Invalid):
    template = (
        'The requested action "{action}" can not be performed on node "{node}" '
        'while it is in state "{state}".'
    )


class InvalidParameterValue(Invalid):
    template = "{err}"


class NodeLocked(Conflict):
    template = (
        "Node {node} is locked by host {host}, please retry after the current "
        "operation is completed."
    )


class NodeAssociated(Conflict):
    template = "Node {node} is associated with instance {instance}."


class InstanceAssociated(Conflict):
    template = (
        "Instance {instance_uuid} is already associated with a node, it cannot be "
        "associated with this other node {node}"
    )


class MACAlreadyExists(Conflict):
    template = "A port with MAC address {mac} already exists."


class DuplicateName(Conflict):
    template = "A node with name {name} already exists."


class NodeInWrongStateForDelete(Invalid):
    template = (
        'Can not delete node "{node}" while it is in provision state "{state}". '
        "Valid provision states to start deletion are: {valid}"
    )


class NodeInMaintenance(Invalid):
    template = "The {op} operation can't be performed on node {node} because it's in maintenance mode."


class HTTPForbidden(BaremetalError):
    status = 403
    template = "Access was denied to the following resource: {resource}"


class InvalidState(Conflict):
    template = "Invalid resource state."


class NodeAlreadyExists(Conflict):
    template = "A node with UUID {uuid} already exists."


class ChassisAlreadyExists(Conflict):
    template = "A chassis with UUID {uuid} already exists."


class PortgroupDuplicateName(Conflict):
    template = "A portgroup with name {name} already exists."


class PortgroupMACAlreadyExists(Conflict):
    template = "A portgroup with MAC address {mac} already exists."


class InvalidUUID(Invalid):
    template = "Expected a UUID but received {uuid}."


class InvalidName(Invalid):
    template = "Expected a logical name but received {name}."


class InvalidMAC(Invalid):
    template = "Expected a MAC address but received {mac}."


class PatchError(Invalid):
    template = "Couldn't apply patch '{patch}'. Reason: {reason}"


class DriverNotFound(Invalid):
    # ironic's DriverNotFound is a 404, but its API answers a node create naming an
    # unknown driver with 400, which is the only place Tether raises it.
    template = "Could not find the following driver(s) or hardware type(s): {driver_name}."


class PortgroupNotEmpty(Invalid):
    template = "Cannot complete the requested action because portgroup {portgroup} contains ports."


class ChassisNotEmpty(Invalid):
    template = "Cannot complete the requested action because chassis {chassis} contains nodes."


class PortgroupPhysnetConflict(Conflict):
    template = (
        "Port with physical network {physnet} cannot become a member of port group "
        "{portgroup} which has ports in physical network {pg_physnet}."
    )


class NetworkError(BaremetalError):
    status = 500
    template = "Network operation failure."


class HardwareTypeNotFound(NotFound):
    """GET /v1/drivers/{name} of a driver no conductor has (ironic's DriverNotFound, a 404 there)."""

    template = "Could not find the following driver(s) or hardware type(s): {driver_name}."


class InterfaceNotFoundInEntrypoint(InvalidParameterValue):
    template = (
        "Could not find the following interface in the '{entrypoint}' entrypoint: {iface}. "
        "Valid interfaces are {valid}."
    )


class NodeProtected(HTTPForbidden):
    template = "Node {node} is protected and cannot be undeployed, rebuilt or deleted"


class NodeIsRetired(Invalid):
    template = "The {op} operation can't be performed on node {node} because it is retired."


class NodeTraitNotFound(NotFound):
    template = "Node {node_id} doesn't have a trait '{trait}'"


class NodeConsoleNotEnabled(Invalid):
    template = "Console access is not enabled on node {node}"


class AllocationNotFound(NotFound):
    template = "Allocation {allocation} could not be found."


class AllocationDuplicateName(Conflict):
    template = "An allocation with name {name} already exists."


class AllocationAlreadyExists(Conflict):
    template = "An allocation with UUID {uuid} already exists."


class ConductorNotFound(NotFound):
    template = "Conductor {conductor} could not be found."


class UnsupportedDriverExtension(Invalid):
    template = "Driver {driver} does not support {extension} (disabled or not implemented)."


class PortAlreadyExists(Conflict):
    template = "A port with UUID {uuid} already exists."


class VolumeConnectorNotFound(NotFound):
    template = "Volume connector {connector} could not be found."


class VolumeConnectorAlreadyExists(Conflict):
    template = "A volume connector with UUID {uuid} already exists."


class VolumeConnectorTypeAndIdAlreadyExists(Conflict):
    template = "A volume connector with type {type} and connector ID {connector_id} already exists."


class VolumeTargetNotFound(NotFound):
    template = "Volume target {target} could not be found."


class VolumeTargetAlreadyExists(Conflict):
    template = "A volume target with UUID {uuid} already exists."


class VolumeTargetBootIndexAlreadyExists(Conflict):
    template = "A volume target with boot index '{boot_index}' for the same node already exists."


class DeployTemplateNotFound(NotFound):
    template = "Deploy template {template} could not be found."


class DeployTemplateAlreadyExists(Conflict):
    template = "A deploy template with UUID {uuid} already exists."


class DeployTemplateDuplicateName(Conflict):
    template = "A deploy template with name {name} already exists."


class InvalidDeployTemplate(Invalid):
    template = "Deploy template invalid: {err}."


class RunbookNotFound(NotFound):
    template = "Runbook {runbook} could not be found."


class RunbookAlreadyExists(Conflict):
    template = "A runbook with UUID {uuid} already exists."


class RunbookDuplicateName(Conflict):
    template = "A runbook with name {name} already exists."


class BIOSSettingNotFound(NotFound):
    template = "Node {node} doesn't have a BIOS setting '{name}'"


class InspectionRuleNotFound(NotFound):
    template = "Rule {rule} could not be found."


class InspectionRuleAlreadyExists(Conflict):
    template = "A rule with UUID {uuid} already exists."
