"""Every table Tether keeps."""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Column,
    Float,
    Index,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    event,
)

from tether.domain import aggregates as aggregate_model
from tether.domain import (
    baremetal,
    compute,
    flavor_access,
    identity,
    image,
    metadefs,
    network,
    network_quotas,
    network_tags,
    quotas,
)
from tether.domain import image_tasks as image_task_model
from tether.domain import inspection_rules as inspection_rule_model
from tether.domain import keypairs as keypair_model
from tether.domain import routers as router_model
from tether.domain import security_groups as security_group_model
from tether.domain import server_groups as server_group_model
from tether.domain.orchestration import stacks as orchestration
from tether.store import name_search
from tether.store.schema import table_for

metadata = MetaData()

# identity
domains = table_for(metadata, "domains", identity.Domain, primary_key=("id",),
                    extra=(UniqueConstraint("name"),))
projects = table_for(metadata, "projects", identity.Project, primary_key=("id",),
                     extra=(UniqueConstraint("domain_id", "name"),))
users = table_for(metadata, "users", identity.User, primary_key=("id",),
                  extra=(UniqueConstraint("domain_id", "name"),))
roles = table_for(metadata, "roles", identity.Role, primary_key=("id",),
                  extra=(UniqueConstraint("name"),))
role_assignments = table_for(
    metadata, "role_assignments", identity.RoleAssignment,
    primary_key=("user_id", "group_id", "project_id", "domain_id", "system", "role_id"),
    extra=(Index("ix_role_assignments_role", "role_id"),),
)
groups = table_for(metadata, "groups", identity.Group, primary_key=("id",),
                   extra=(UniqueConstraint("domain_id", "name"),))
group_members = table_for(metadata, "group_members", identity.GroupMember, primary_key=("group_id", "user_id"),
                          extra=(Index("ix_group_members_user", "user_id"),))
regions = table_for(metadata, "regions", identity.Region, primary_key=("id",))
catalog_services = table_for(metadata, "catalog_services", identity.CatalogService, primary_key=("id",))
endpoints = table_for(metadata, "endpoints", identity.Endpoint, primary_key=("id",),
                      extra=(Index("ix_endpoints_service", "service_id"),))
application_credentials = table_for(
    metadata, "application_credentials", identity.ApplicationCredential, primary_key=("id",),
    extra=(UniqueConstraint("user_id", "name"),),
)
tokens = table_for(metadata, "tokens", identity.Token, primary_key=("id",),
                   extra=(Index("ix_tokens_user", "user_id"),))
# OS-INHERIT: grants on a domain or project that its projects (below it) inherit, kept apart from the
# grants on the target itself, which they do not touch
inherited_role_assignments = table_for(
    metadata, "inherited_role_assignments", identity.InheritedRoleAssignment,
    primary_key=("user_id", "group_id", "project_id", "domain_id", "system", "role_id"),
    extra=(Index("ix_inherited_role_assignments_role", "role_id"),),
)
credentials = table_for(metadata, "credentials", identity.Credential, primary_key=("id",), text=("blob",),
                        extra=(Index("ix_credentials_user", "user_id"),))
oauth_consumers = table_for(metadata, "oauth_consumers", identity.OAuthConsumer, primary_key=("id",))
domain_configs = table_for(metadata, "domain_configs", identity.DomainConfig, primary_key=("domain_id",))
policies = table_for(metadata, "policies", identity.Policy, primary_key=("id",), text=("blob",))
endpoint_groups = table_for(metadata, "endpoint_groups", identity.EndpointGroup, primary_key=("id",))

# image
images = table_for(metadata, "images", image.Image, primary_key=("id",),
                   extra=(Index("ix_images_name", "name"),
                          # glance's default order, newest first
                          Index("ix_images_created", "created_at", "id")))
metadef_namespaces = table_for(metadata, "metadef_namespaces", metadefs.MetadefNamespace,
                               primary_key=("namespace",), text=("description",))
image_members = table_for(metadata, "image_members", image.ImageMember, primary_key=("image_id", "member_id"),
                          extra=(Index("ix_image_members_member", "member_id"),))
image_tasks = table_for(metadata, "image_tasks", image_task_model.ImageTask, primary_key=("id",), text=("message",))

# network
networks = table_for(metadata, "networks", network.Network, primary_key=("id",),
                     extra=(Index("ix_networks_name", "name"),))
subnets = table_for(metadata, "subnets", network.Subnet, primary_key=("id",),
                    extra=(Index("ix_subnets_network", "network_id"),))
ports = table_for(
    metadata, "ports", network.Port, primary_key=("id",), exclude=("fixed_ips",),
    extra=(
        # One MAC per network: the database itself refuses a clash (MacAddressInUse).
        UniqueConstraint("network_id", "mac_address", name="uq_ports_network_mac"),
        Index("ix_ports_device", "device_id"),
        Index("ix_ports_name", "name"),
        Index("ix_ports_mac", "mac_address"),
        Index("ix_ports_binding_host", "binding_host_id"),
        Index("ix_ports_project", "project_id", "id"),
    ),
)
ip_allocations = table_for(
    metadata, "ip_allocations", network.IpAllocation, primary_key=("subnet_id", "ip_address"),
    extra=(Index("ix_ip_allocations_port", "port_id"), Index("ix_ip_allocations_address", "ip_address")),
)
security_groups = table_for(metadata, "security_groups", security_group_model.SecurityGroup, primary_key=("id",),
                            extra=(Index("ix_security_groups_project", "project_id"),))
security_group_rules = table_for(
    metadata, "security_group_rules", security_group_model.SecurityGroupRule, primary_key=("id",),
    extra=(Index("ix_security_group_rules_group", "security_group_id"),),
)
routers = table_for(metadata, "routers", router_model.Router, primary_key=("id",),
                    extra=(Index("ix_routers_project", "project_id"),))
floating_ips = table_for(
    metadata, "floating_ips", router_model.FloatingIp, primary_key=("id",),
    extra=(Index("ix_floating_ips_port", "port_id"),
           UniqueConstraint("floating_network_id", "floating_ip_address", name="uq_floating_ips_address")),
)
resource_tags = table_for(metadata, "resource_tags", network_tags.ResourceTag, primary_key=("resource_id", "tag"))
network_quota_limits = table_for(metadata, "network_quota_limits", network_quotas.NetworkQuota,
                                 primary_key=("project_id", "resource"))

# bare metal
nodes = table_for(metadata, "nodes", baremetal.Node, primary_key=("uuid",), text=("description",),
                  extra=(UniqueConstraint("name", name="uq_nodes_name"),
                         UniqueConstraint("instance_uuid", name="uq_nodes_instance"),
                         Index("ix_nodes_created", "created_at", "uuid"),
                         Index("ix_nodes_provision_state", "provision_state"),
                         Index("ix_nodes_maintenance", "maintenance"),
                         Index("ix_nodes_shard", "shard")))
node_ports = table_for(metadata, "node_ports", baremetal.NodePort, primary_key=("uuid",),
                       extra=(UniqueConstraint("address", name="uq_node_ports_address"),
                              Index("ix_node_ports_node", "node_uuid"),
                              Index("ix_node_ports_portgroup", "portgroup_uuid"),
                              Index("ix_node_ports_created", "created_at", "uuid")))
portgroups = table_for(metadata, "portgroups", baremetal.Portgroup, primary_key=("uuid",),
                       extra=(Index("ix_portgroups_node", "node_uuid"),))
chassis = table_for(metadata, "chassis", baremetal.Chassis, primary_key=("uuid",))
allocations = table_for(metadata, "allocations", baremetal.Allocation, primary_key=("uuid",), text=("last_error",),
                        extra=(UniqueConstraint("name", name="uq_allocations_name"),
                               Index("ix_allocations_node", "node_uuid")))
node_history = table_for(metadata, "node_history", baremetal.NodeHistoryEvent, primary_key=("uuid",),
                         text=("event",), extra=(Index("ix_node_history_node", "node_uuid", "created_at"),))
volume_connectors = table_for(
    metadata, "volume_connectors", baremetal.VolumeConnector, primary_key=("uuid",),
    extra=(UniqueConstraint("type", "connector_id", name="uq_volume_connectors_type_id"),
           Index("ix_volume_connectors_node", "node_uuid")))
volume_targets = table_for(
    metadata, "volume_targets", baremetal.VolumeTarget, primary_key=("uuid",),
    extra=(UniqueConstraint("node_uuid", "boot_index", name="uq_volume_targets_node_boot_index"),))
deploy_templates = table_for(metadata, "deploy_templates", baremetal.DeployTemplate, primary_key=("uuid",),
                             extra=(UniqueConstraint("name", name="uq_deploy_templates_name"),))
runbooks = table_for(metadata, "runbooks", baremetal.Runbook, primary_key=("uuid",),
                     extra=(UniqueConstraint("name", name="uq_runbooks_name"),))
inspection_rules = table_for(metadata, "inspection_rules", inspection_rule_model.InspectionRule, primary_key=("uuid",))

# compute
flavors = table_for(metadata, "flavors", compute.Flavor, primary_key=("id",),
                    extra=(UniqueConstraint("name", name="uq_flavors_name"),))
hypervisors = table_for(metadata, "hypervisors", compute.Hypervisor, primary_key=("id",),
                        autoincrement="id",
                        extra=(UniqueConstraint("hostname", name="uq_hypervisors_hostname"),))
instances = table_for(metadata, "instances", compute.Instance, primary_key=("uuid",), text=("user_data",),
                      extra=(Index("ix_instances_name", "name"),
                             # nova's default order, newest first: one project's, and everyone's
                             Index("ix_instances_project_created", "project_id", "created_at", "uuid"),
                             Index("ix_instances_created", "created_at", "uuid"),
                             Index("ix_instances_host", "host"),
                             Index("ix_instances_node", "node"),
                             Index("ix_instances_state", "vm_state"),
                             # a boot's quota count and its scheduling read live servers only, covered
                             Index("ix_instances_live_project", "deleted", "project_id", "flavor_id"),
                             Index("ix_instances_live_hosts", "deleted", "is_baremetal", "host", "flavor_id"),
                             # start-up's look at what a server action may have left half-done
                             Index("ix_instances_task_state", "task_state")))
instance_vifs = table_for(metadata, "instance_vifs", compute.VifEntry,
                          primary_key=("instance_uuid", "port_id"),
                          extra=(Index("ix_instance_vifs_port", "port_id"),))
instance_actions = table_for(metadata, "instance_actions", compute.InstanceAction,
                             primary_key=("request_id", "instance_uuid"),
                             # one server's actions, newest first, a page at a time
                             extra=(Index("ix_instance_actions_instance", "instance_uuid", "start_time",
                                          "request_id"),))
action_events = table_for(metadata, "action_events", compute.ActionEvent, primary_key=("id",),
                          autoincrement="id", text=("traceback",),
                          extra=(Index("ix_action_events_request", "request_id"),))
instance_faults = table_for(metadata, "instance_faults", compute.InstanceFault,
                            primary_key=("id",), autoincrement="id", text=("message", "details"),
                            extra=(Index("ix_instance_faults_instance", "instance_uuid"),))
keypairs = table_for(metadata, "keypairs", keypair_model.Keypair, primary_key=("id",), autoincrement="id",
                     text=("public_key",),
                     extra=(UniqueConstraint("user_id", "name", name="uq_keypairs_user_name"),))
quota_limits = table_for(metadata, "quota_limits", quotas.QuotaLimit,
                         primary_key=("project_id", "user_id", "resource"))
server_groups = table_for(metadata, "server_groups", server_group_model.ServerGroup, primary_key=("id",),
                          extra=(Index("ix_server_groups_project", "project_id"),))
server_group_members = table_for(metadata, "server_group_members", server_group_model.ServerGroupMember,
                                 primary_key=("group_id", "instance_uuid"),
                                 extra=(Index("ix_server_group_members_instance", "instance_uuid"),))
flavor_projects = table_for(metadata, "flavor_projects", flavor_access.FlavorAccess,
                            primary_key=("flavor_id", "project_id"))
aggregates = table_for(metadata, "aggregates", aggregate_model.Aggregate, primary_key=("id",), autoincrement="id",
                       extra=(UniqueConstraint("uuid", name="uq_aggregates_uuid"),))

# orchestration
stacks = table_for(metadata, "stacks", orchestration.Stack, primary_key=("id",),
                   text=("status_reason",),
                   extra=(Index("ix_stacks_project_name", "project_id", "name"),
                          Index("ix_stacks_parent", "parent_id")))
stack_resources = table_for(metadata, "stack_resources", orchestration.StackResource, primary_key=("id",),
                            text=("status_reason",),
                            extra=(Index("ix_stack_resources_stack", "stack_id", "name"),
                                   Index("ix_stack_resources_physical", "physical_id")))
stack_ports = table_for(metadata, "stack_ports", orchestration.StackPort, primary_key=("port_id",),
                        extra=(Index("ix_stack_ports_resource", "resource_id"),
                               Index("ix_stack_ports_stack", "stack_id")))
stack_events = table_for(metadata, "stack_events", orchestration.StackEvent, primary_key=("sequence",),
                         autoincrement="sequence", text=("resource_status_reason",),
                         extra=(UniqueConstraint("id", name="uq_stack_events_id"),
                                Index("ix_stack_events_stack", "stack_id", "sequence")))

# Durable intents (design rule 5): written before a multi-step operation's
# first side effect, removed when it ends; recovery finishes or undoes the rest.
intents = Table(
    "intents", metadata,
    Column("id", String(255), primary_key=True),
    Column("kind", String(64), nullable=False),
    Column("key", String(64), nullable=False),
    Column("payload", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Index("ix_intents_key", "key"),
)


# Server names' substring index (store.name_search): outside the metadata, installed with it.
@event.listens_for(metadata, "after_create")
def _install_name_search(target: MetaData, connection: Any, **_: Any) -> None:
    name_search.install(connection)


@event.listens_for(metadata, "before_drop")
def _uninstall_name_search(target: MetaData, connection: Any, **_: Any) -> None:
    name_search.uninstall(connection)
