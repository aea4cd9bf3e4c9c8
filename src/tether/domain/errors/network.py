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
    template = "Port {port_id} is bound; unbind it before changing its MAC address."


class NotAuthorized(NetworkError):
    status = 403
    template = "The request you have made requires authorization."
