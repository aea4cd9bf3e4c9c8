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


class InUse(Conflict):
    """neutron-lib's InUse: the resource is still referenced."""

    template = "The resource is in use."


class InvalidCIDR(BadRequest):
    template = "Invalid CIDR {input} given as IP prefix."


class OverQuota(Conflict):
    template = "Quota exceeded for resources: {overs}."


class ServicePortInUse(InUse):
    template = "Port {port_id} cannot be deleted directly via the port API: {reason}."


# -- security groups (neutron's extensions/securitygroup.py) ---------------------------------


class SecurityGroupNotFound(NotFound):
    template = "Security group {id} does not exist"


class SecurityGroupRuleNotFound(NotFound):
    template = "Security group rule {id} does not exist"


class SecurityGroupInUse(InUse):
    template = "Security Group {id} in use."


class SecurityGroupCannotRemoveDefault(InUse):
    template = "Insufficient rights for removing default security group."


class SecurityGroupCannotUpdateDefault(InUse):
    template = "Updating default security group not allowed."


class SecurityGroupDefaultAlreadyExists(InUse):
    template = "Default security group already exists."


class SecurityGroupRuleExists(InUse):
    template = "Security group rule already exists. Rule id is {rule_id}."


class DuplicateSecurityGroupRuleInPost(InUse):
    template = "Duplicate Security Group Rule in POST."


class SecurityGroupInvalidPortRange(InvalidInput):
    template = "For TCP/UDP protocols, port_range_min must be <= port_range_max"


class SecurityGroupInvalidProtocolForPort(InvalidInput):
    template = ("Ports cannot be specified for protocol {protocol}. "
                "Ports are only supported for {valid_port_protocols}.")


class SecurityGroupInvalidPortValue(InvalidInput):
    template = "Invalid value for port {port}"


class SecurityGroupInvalidIcmpValue(InvalidInput):
    template = "Invalid value for ICMP {field} ({attr}) {value}. It must be 0 to 255."


class SecurityGroupEthertypeConflictWithProtocol(InvalidInput):
    template = "Invalid ethertype {ethertype} for protocol {protocol}."


class SecurityGroupMissingIcmpType(InvalidInput):
    template = "ICMP code (port-range-max) {value} is provided but ICMP type (port-range-min) is missing."


class SecurityGroupRuleInvalidProtocol(InvalidInput):
    template = ("Security group rule protocol {protocol} not supported. Only protocol values {values} and "
                "integer representations [0 to 255] are supported.")


class SecurityGroupMultipleRemoteEntites(InvalidInput):
    template = "Only one of remote_ip_prefix or remote_group_id or remote_address_group_id may be provided."


class SecurityGroupProtocolRequiredWithPorts(InvalidInput):
    template = "Must also specify protocol if port range is given."


class SecurityGroupNotSingleGroupRules(InvalidInput):
    template = "Only allowed to update rules for one security profile at a time"


class SecurityGroupRuleParameterConflict(InvalidInput):
    template = "Conflicting value ethertype {ethertype} for CIDR {cidr}"


class SecurityGroupRuleInvalidEtherType(InvalidInput):
    template = "Security group rule for ethertype '{ethertype}' not supported. Allowed values are {values}."


# -- port security and allowed address pairs ------------------------------------------------


class PortSecurityAndIPRequiredForSecurityGroups(InvalidInput):
    template = ("Port security must be enabled and port must have an IP address in order to use security "
                "groups.")


class PortSecurityPortHasSecurityGroup(InUse):
    template = ("Port has security group associated. Cannot disable port security or ip address until "
                "security group is removed")


class AddressPairAndPortSecurityRequired(Conflict):
    template = "Port Security must be enabled in order to have allowed address pairs on a port."


class AllowedAddressPairsMissingIP(InvalidInput):
    template = "AllowedAddressPair must contain ip_address"


class DuplicateAddressPairInRequest(InvalidInput):
    template = "Request contains duplicate address pair: mac_address {mac_address} ip_address {ip_address}."


class AllowedAddressPairExhausted(BadRequest):
    template = "The number of allowed address pair exceeds the maximum {quota}."


class HostRoutesExhausted(BadRequest):
    template = ("Unable to complete operation for {subnet_id}. The number of host routes exceeds the limit "
                "{quota}.")


# -- routers and floating IPs (neutron-lib's exceptions/l3.py) --------------------------------


class RouterNotFound(NotFound):
    template = "Router {router_id} could not be found"


class RouterInUse(InUse):
    template = "Router {router_id} {reason}"


class RouterInterfaceNotFound(NotFound):
    template = "Router {router_id} does not have an interface with id {port_id}"


class RouterInterfaceNotFoundForSubnet(NotFound):
    template = "Router {router_id} has no interface on subnet {subnet_id}"


class RouterInterfaceInUseByFloatingIP(InUse):
    template = ("Router interface for subnet {subnet_id} on router {router_id} cannot be deleted, as it is "
                "required by one or more floating IPs.")


class RouterInterfaceInUseByRoute(InUse):
    template = ("Router interface for subnet {subnet_id} on router {router_id} cannot be deleted, as it is "
                "required by one or more routes.")


class RouterExternalGatewayInUseByFloatingIp(InUse):
    template = ("Gateway cannot be updated for router {router_id}, since a gateway to external network "
                "{net_id} is required by one or more floating IPs.")


class InvalidRoutes(InvalidInput):
    template = "Invalid format for routes: {routes}, {reason}"


class RoutesExhausted(BadRequest):
    template = "Unable to complete operation for {router_id}. The number of routes exceeds the maximum {quota}."


class FloatingIPNotFound(NotFound):
    template = "Floating IP {floatingip_id} could not be found"


class ExternalGatewayForFloatingIPNotFound(NotFound):
    template = ("External network {external_network_id} is not reachable from subnet {subnet_id}.  "
                "Therefore, cannot associate Port {port_id} with a Floating IP.")


class FloatingIPPortAlreadyAssociated(InUse):
    template = ("Cannot associate floating IP {floating_ip_address} ({fip_id}) with port {port_id} using fixed "
                "IP {fixed_ip}, as that fixed IP already has a floating IP on external network {net_id}.")


class AgentNotFound(NotFound):
    template = "Agent {id} could not be found"


class TagNotFound(NotFound):
    template = "Tag {tag} could not be found."


class AttributeRefused(BadRequest):
    """A validator that answers with its own words only (neutron raises webob's HTTPBadRequest(msg))."""

    template = "{reason}"
