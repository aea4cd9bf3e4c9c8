"""Network (neutron) errors, in neutron's words."""

from __future__ import annotations

from tether.domain.errors import TetherError


class NetworkError(TetherError):
    service = "network"
    status = 500


class BadRequest(NetworkError):
    status = 400
    template = "Bad {resource} request: {msg}."


class InvalidInput(NetworkError):
    status = 400
    template = "Invalid input for operation: {error_message}."


class InvalidAttribute(BadRequest):
    """A request attribute failed validation (neutron-lib's validators, word for word)."""

    template = "Invalid input for {attr}. Reason: {reason}."


class UnrecognizedAttribute(BadRequest):
    template = "Unrecognized attribute(s) '{attrs}'"


class ReadOnlyAttribute(BadRequest):
    template = "Cannot update read-only attribute {attr}"


class InvalidFilter(BadRequest):
    template = "{names} is invalid attribute for filtering"


class InvalidAllocationPool(BadRequest):
    template = "The allocation pool {pool} is not valid."


class OutOfBoundsAllocationPool(BadRequest):
    template = "The allocation pool {pool} spans beyond the subnet cidr {subnet_cidr}."


class InvalidIpForSubnet(BadRequest):
    template = "IP address {ip_address} is not a valid IP for the specified subnet."


class InvalidIpForNetwork(BadRequest):
    template = "IP address {ip_address} is not a valid IP for any of the subnets on the specified network."


class NotFound(NetworkError):
    status = 404


class NetworkNotFound(NotFound):
    template = "Network {net_id} could not be found."


class SubnetNotFound(NotFound):
    template = "Subnet {subnet_id} could not be found."


class PortNotFound(NotFound):
    template = "Port {port_id} could not be found."


class Conflict(NetworkError):
    status = 409


class MacAddressInUse(Conflict):
    template = "Unable to complete operation for network {net_id}. The mac address {mac} is in use."


class IpAddressInUse(Conflict):
    template = (
        "Unable to complete operation for network {net_id}. "
        "The IP address {ip_address} is in use."
    )


class IpAddressGenerationFailure(Conflict):
    template = "No more IP addresses available on network {net_id}."


class PortInUse(Conflict):
    template = (
        "Unable to complete operation on port {port_id} for network {net_id}. "
        "Port already has an attached device {device_id}."
    )


class NetworkInUse(Conflict):
    template = (
        "Unable to complete operation on network {net_id}. "
        "There are one or more ports still in use on the network."
    )


class SubnetInUse(Conflict):
    template = (
        "Unable to complete operation on subnet {subnet_id}: "
        "One or more ports have an IP allocation from this subnet."
    )


class MacChangeOnBoundPort(Conflict):
    """Neutron's PortBound: it refuses to change the MAC of a bound port."""

    template = (
        "Unable to complete operation on port {port_id}, port is already bound, "
        "port type: {vif_type}, old_mac {old_mac}, new_mac {new_mac}."
    )


class OverlappingAllocationPools(Conflict):
    template = "Found overlapping allocation pools: {pool_1} {pool_2} for subnet {subnet_cidr}."


class GatewayConflictWithAllocationPools(Conflict):
    template = "Gateway ip {ip_address} conflicts with allocation pool {pool}."


class GatewayIpInUse(Conflict):
    template = "Current gateway ip {ip_address} already in use by port {port_id}. Unable to update."


class InvalidSharedSetting(Conflict):
    template = "Unable to reconfigure sharing settings for network {network}. Multiple tenants are using it."


class MacAddressGenerationFailure(NetworkError):
    status = 503
    template = "Unable to generate unique mac on network {net_id}."


class NotAuthorized(NetworkError):
    status = 403
    template = "The request you have made requires authorization."
