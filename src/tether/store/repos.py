"""One repository per entity; services import these rather than touching tables."""

from __future__ import annotations

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
from tether.store import tables
from tether.store.repository import Repository

domains = Repository(tables.domains, identity.Domain, "id")
projects = Repository(tables.projects, identity.Project, "id")
users = Repository(tables.users, identity.User, "id")
roles = Repository(tables.roles, identity.Role, "id")
role_assignments = Repository(tables.role_assignments, identity.RoleAssignment, None)
tokens = Repository(tables.tokens, identity.Token, "id")
groups = Repository(tables.groups, identity.Group, "id")
group_members = Repository(tables.group_members, identity.GroupMember, None)
regions = Repository(tables.regions, identity.Region, "id")
catalog_services = Repository(tables.catalog_services, identity.CatalogService, "id")
endpoints = Repository(tables.endpoints, identity.Endpoint, "id")
application_credentials = Repository(tables.application_credentials, identity.ApplicationCredential, "id")
inherited_role_assignments = Repository(tables.inherited_role_assignments, identity.InheritedRoleAssignment, None)
credentials = Repository(tables.credentials, identity.Credential, "id")
oauth_consumers = Repository(tables.oauth_consumers, identity.OAuthConsumer, "id")
domain_configs = Repository(tables.domain_configs, identity.DomainConfig, "domain_id")
policies = Repository(tables.policies, identity.Policy, "id")
endpoint_groups = Repository(tables.endpoint_groups, identity.EndpointGroup, "id")

images = Repository(tables.images, image.Image, "id")
image_members = Repository(tables.image_members, image.ImageMember, None)
image_tasks = Repository(tables.image_tasks, image_task_model.ImageTask, "id")
metadef_namespaces = Repository(tables.metadef_namespaces, metadefs.MetadefNamespace, "namespace")

networks = Repository(tables.networks, network.Network, "id")
subnets = Repository(tables.subnets, network.Subnet, "id")
ports = Repository(tables.ports, network.Port, "id")
ip_allocations = Repository(tables.ip_allocations, network.IpAllocation, None)
security_groups = Repository(tables.security_groups, security_group_model.SecurityGroup, "id")
security_group_rules = Repository(tables.security_group_rules, security_group_model.SecurityGroupRule, "id")
routers = Repository(tables.routers, router_model.Router, "id")
floating_ips = Repository(tables.floating_ips, router_model.FloatingIp, "id")
resource_tags = Repository(tables.resource_tags, network_tags.ResourceTag, None)
network_quota_limits = Repository(tables.network_quota_limits, network_quotas.NetworkQuota, None)

nodes = Repository(tables.nodes, baremetal.Node, "uuid")
node_ports = Repository(tables.node_ports, baremetal.NodePort, "uuid")
portgroups = Repository(tables.portgroups, baremetal.Portgroup, "uuid")
chassis = Repository(tables.chassis, baremetal.Chassis, "uuid")
allocations = Repository(tables.allocations, baremetal.Allocation, "uuid")
node_history = Repository(tables.node_history, baremetal.NodeHistoryEvent, "uuid")
volume_connectors = Repository(tables.volume_connectors, baremetal.VolumeConnector, "uuid")
volume_targets = Repository(tables.volume_targets, baremetal.VolumeTarget, "uuid")
deploy_templates = Repository(tables.deploy_templates, baremetal.DeployTemplate, "uuid")
runbooks = Repository(tables.runbooks, baremetal.Runbook, "uuid")
inspection_rules = Repository(tables.inspection_rules, inspection_rule_model.InspectionRule, "uuid")

flavors = Repository(tables.flavors, compute.Flavor, "id")
hypervisors = Repository(tables.hypervisors, compute.Hypervisor, "id")
instances = Repository(tables.instances, compute.Instance, "uuid")
instance_vifs = Repository(tables.instance_vifs, compute.VifEntry, None)
instance_actions = Repository(tables.instance_actions, compute.InstanceAction, None)
action_events = Repository(tables.action_events, compute.ActionEvent, "id")
instance_faults = Repository(tables.instance_faults, compute.InstanceFault, "id")
keypairs = Repository(tables.keypairs, keypair_model.Keypair, "id")
quota_limits = Repository(tables.quota_limits, quotas.QuotaLimit, None)
server_groups = Repository(tables.server_groups, server_group_model.ServerGroup, "id")
server_group_members = Repository(tables.server_group_members, server_group_model.ServerGroupMember, None)
flavor_projects = Repository(tables.flavor_projects, flavor_access.FlavorAccess, None)
aggregates = Repository(tables.aggregates, aggregate_model.Aggregate, "id")

stacks = Repository(tables.stacks, orchestration.Stack, "id")
stack_resources = Repository(tables.stack_resources, orchestration.StackResource, "id")
stack_ports = Repository(tables.stack_ports, orchestration.StackPort, "port_id")
stack_events = Repository(tables.stack_events, orchestration.StackEvent, "sequence")
