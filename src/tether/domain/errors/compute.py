"""Compute (nova) errors."""

from __future__ import annotations

from tether.domain.errors import TetherError


class ComputeError(TetherError):
    service = "compute"
    status = 500


class ComputeBadRequest(ComputeError):
    status = 400
    template = "{reason}"


class ComputeForbidden(ComputeError):
    status = 403
    template = "Policy doesn't allow {action} to be performed."


class ComputeConflict(ComputeError):
    status = 409
    template = "{reason}"


class ComputeNotFound(ComputeError):
    status = 404
    template = "{reason}"


class InstanceNotFound(ComputeNotFound):
    template = "Instance {instance_id} could not be found."


class FlavorNotFound(ComputeNotFound):
    template = "Flavor {flavor_id} could not be found."


class ImageNotFound(ComputeNotFound):
    template = "Image {image_id} could not be found."


class NetworkNotFound(ComputeNotFound):
    template = "Network {network_id} could not be found."


class PortNotFound(ComputeNotFound):
    template = "Port id {port_id} could not be found."


class PortNotAttached(PortNotFound):
    template = "Port {port_id} is not attached"


class HypervisorNotFound(ComputeNotFound):
    template = "Hypervisor {hypervisor_id} could not be found."


class ActionNotFound(ComputeNotFound):
    template = "Action for request_id {request_id} on instance {instance_uuid} not found"


class PortInUse(ComputeConflict):
    template = "Port {port_id} is still in use."


class InstanceInvalidState(ComputeConflict):
    template = "Cannot '{action}' instance {instance_uuid} while it is in {attr} {state}"


class InstanceIsLocked(ComputeConflict):
    template = "Instance {instance_uuid} is locked"


class ComputeNotImplemented(ComputeError):
    """What the virt driver cannot do, as nova's API answers NotImplementedError (501)."""

    status = 501
    template = "{reason}"


class NotSupportedByDriver(ComputeNotImplemented):
    template = "{what} is not supported by the {driver} driver."


class InterfaceAttachFailed(ComputeConflict):
    template = "Failed to attach network adapter device to {instance_uuid}"


class MultipleNetworksFound(ComputeConflict):
    template = (
        "Multiple possible networks found, use a Network ID to be more specific."
    )


class NoNetworksFound(ComputeBadRequest):
    template = "No networks are available to project {project_id}; use networks 'none'."


# Not API errors: these end a build and become the instance fault.
class BuildFailure(ComputeError):
    template = "{reason}"


class NoValidHost(BuildFailure):
    template = "No valid host was found. {reason}"


class BuildAbortException(BuildFailure):
    template = "Build of instance {instance_uuid} aborted: {reason}"


class InstanceDeployFailure(BuildFailure):
    template = "Failed to provision instance {instance_uuid}: {reason}"


class ProvisioningAborted(BuildFailure):
    template = "Instance {instance_uuid} provisioning was aborted"


class VirtualInterfacePlugException(BuildFailure):
    template = "Cannot attach VIF {vif} to the node {node} due to error: {error}"


class VirtualInterfaceCreateException(BuildFailure):
    template = "Virtual Interface creation failed"


class NodeLost(BuildFailure):
    template = (
        "Node {node} no longer runs instance {instance_uuid}: it was torn down, deleted "
        "or reassigned outside compute."
    )


# -- keypairs, quotas and server groups ---------------------------------------------


class KeypairNotFound(ComputeNotFound):
    template = "Keypair {name} not found for user {user_id}"


class KeyPairExists(ComputeConflict):
    template = "Key pair '{key_name}' already exists."


class InvalidKeypair(ComputeBadRequest):
    template = "Keypair data is invalid: {reason}"


class OverQuota(ComputeError):
    """nova's OverQuota family: its API answers each with 403 and the message."""

    status = 403
    template = "Quota exceeded for resources: {overs}"


class TooManyInstances(OverQuota):
    template = "Quota exceeded for {overs}: Requested {req}, but already used {used} of {allowed} {overs}"


class KeypairLimitExceeded(OverQuota):
    template = "Quota exceeded, too many key pairs."


class ServerGroupLimitExceeded(OverQuota):
    template = "Quota exceeded, too many server groups."


class InstanceGroupNotFound(ComputeNotFound):
    template = "Instance group {group_uuid} could not be found."
