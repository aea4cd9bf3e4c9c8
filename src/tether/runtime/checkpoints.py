"""Every named checkpoint, in one place.

A checkpoint is a point where another actor could interleave: after an
external call or a state change. Fault rules and the explorer address them by
name, so the names are declared here and nowhere else; reaching an undeclared
one is a programming error.
"""

from __future__ import annotations

CHECKPOINTS: dict[str, str] = {
    # compute: build
    "compute.build.after_schedule": "a host or node is claimed, nothing is plugged yet",
    "compute.build.before_vif_plug": "ports are allocated and bound; guest devices or node VIFs not yet plugged",
    "compute.build.wait_vif_plugged": "a VM waits for network-vif-plugged from every port",
    "compute.build.before_node_deploy": "VIFs are on the node; the deploy is not yet requested",
    "compute.build.wait_active": "a bare-metal build polls its node",
    "compute.build.before_cleanup": "a build failed; its resources are not yet released",
    # compute: delete
    "compute.delete.before_unplug": "the instance lock is held; nothing is unplugged yet",
    "compute.delete.before_node_teardown": "VIFs are detached; the node is not yet torn down",
    "compute.delete.before_port_cleanup": "devices are unplugged; ports not yet deleted or released",
    # compute: interfaces and events
    "compute.attach_interface.before_driver_attach": "the port is bound to the instance; no guest device yet",
    "compute.attach_interface.before_cache_update": "the guest device exists; the info cache does not list it yet",
    "compute.detach_interface.before_driver_detach": "the port is still bound and plugged",
    "compute.detach_interface.before_unbind": "the guest device is gone; the port is still bound",
    "compute.vif_deleted.before_detach": "the port-deleted event found its VIF; nothing is unplugged yet",
    "compute.refresh_cache.before_drop": "a cache refresh found a vanished port; the cache still lists it",
    # compute: server actions
    "compute.power_action.before_driver": "a power action (stop, start, reboot, pause, ...) holds the instance lock; "
                                          "the driver is not yet told",
    "compute.rebuild.before_driver": "the instance is rebuilding; its guest or node is not yet touched",
    "compute.rebuild.wait_active": "a bare-metal rebuild polls its node, which redeploys with its VIFs kept",
    "compute.resize.before_finish": "the guest is powered off for its new flavor; the flavor is not yet changed",
    "compute.resize_revert.before_driver": "a resize revert holds the instance lock; the guest still has the new "
                                           "flavor",
    "compute.rescue.before_driver": "the instance is rescuing or unrescuing; the guest is not yet rebooted",
    "compute.snapshot.before_upload": "the snapshot's image is queued; its data is not yet written",
    # network
    "network.port_delete.before_notify": "the port row is gone; compute is not yet told",
    "network.port_update.before_notify": "a port changed; compute is not yet told",
    "network.agent.before_port_active": "a guest device appeared; the port is not yet ACTIVE",
    # bare metal
    "baremetal.vif_attach.before_mac_update": "a free NIC is chosen; the network port keeps its old MAC",
    "baremetal.vif_detach.before_unbind": "the VIF is off the NIC; the network port is still bound",
    "baremetal.deploy.start": "the node is deploying; the hardware has not been told",
    "baremetal.deploy.wait_callback": "the node sits in wait call-back for the ramdisk",
    "baremetal.deploy.before_active": "the ramdisk called back; the node is not yet active",
    "baremetal.teardown.before_vif_detach": "the node is deleting; its VIFs are still attached",
    "baremetal.teardown.before_clean": "VIFs are detached; cleaning has not started",
    "baremetal.clean.wait": "the node is cleaning",
    # orchestration
    "orchestration.engine.wait": "a stack's loop waits for a resource to finish",
    "orchestration.port.before_create": "the stack recorded the id of a port it makes; the port is not made yet",
    "orchestration.create.before_wait": "a resource's physical resource is requested; it may not be ready",
    "orchestration.delete.before_wait": "a resource's physical resource is being deleted; it may not be gone",
    "orchestration.server.wait_active": "a stack's server is building",
    "orchestration.server.wait_deleted": "a stack's server is being deleted",
    # locks (waiting for a lock is a scheduling point too)
    "lock.wait.stack": "waiting for a stack resource's lock",
    "lock.wait.instance": "waiting for an instance's lock",
    "lock.wait.node": "waiting for a node's lock",
    "lock.wait.port": "waiting for a port's lock",
    # background work
    "task.start": "a spawned task (an event, a conductor job) is about to run",
}


# Protections: where two layers guard one invariant, each layer can be switched off alone by a
# fault rule ``NAME=off``, so a scenario shows that the other layer holds without it.
PROTECTIONS: dict[str, str] = {
    "compute.delete.detach_node_vifs": "a bare-metal delete detaches every VIF its node lists before tear-down "
                                       "(rule 1, seed 000); the node's own tear-down does the same (a node that is "
                                       "only released, never deployed, has no second layer: there it stays on)",
    "baremetal.teardown.detach_vifs": "a node's tear-down detaches every VIF it lists (rule 1, seed 000); "
                                      "compute's delete does the same first",
}


def is_protection(name: str) -> bool:
    return name in PROTECTIONS


def is_checkpoint(name: str) -> bool:
    return name in CHECKPOINTS


def checkpoint_names() -> list[str]:
    return sorted(CHECKPOINTS)
