"""The schema as the last release before migrations wrote it (``tether_schema`` version 1).

Frozen on purpose: later revisions change the schema, never this one. A database from that
release has every table below and no ``alembic_version``; it is stamped with this revision
rather than created by it (see ``tether.store.upgrade``).

Revision ID: 0001_baseline
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None

TABLES = (
    "domains", "projects", "users", "roles", "role_assignments", "tokens", "images", "networks", "subnets",
    "ports", "ip_allocations", "nodes", "node_ports", "portgroups", "chassis", "flavors", "hypervisors",
    "instances", "instance_vifs", "instance_actions", "action_events", "instance_faults", "intents",
    "tether_schema",
)


def upgrade() -> None:
    op.create_table(
        "domains",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )

    op.create_table(
        "projects",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("domain_id", sa.String(length=255), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("domain_id", "name"),
    )

    op.create_table(
        "users",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("domain_id", sa.String(length=255), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("default_project_id", sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("domain_id", "name"),
    )

    op.create_table(
        "roles",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("implies", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )

    op.create_table(
        "role_assignments",
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=False),
        sa.Column("role_id", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("user_id", "project_id", "role_id"),
    )

    op.create_table(
        "tokens",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=True),
        sa.Column("system", sa.Boolean(), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=True),
        sa.Column("issued_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("revoked", sa.Boolean(), nullable=False),
        sa.Column("audit_id", sa.String(length=255), nullable=False),
        sa.Column("methods", sa.JSON(), nullable=True),
        sa.Column("user_name", sa.String(length=255), nullable=False),
        sa.Column("user_domain_id", sa.String(length=255), nullable=False),
        sa.Column("user_domain_name", sa.String(length=255), nullable=False),
        sa.Column("project_name", sa.String(length=255), nullable=True),
        sa.Column("project_domain_id", sa.String(length=255), nullable=True),
        sa.Column("project_domain_name", sa.String(length=255), nullable=True),
        sa.Column("role_ids", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_tokens_user", "tokens", ["user_id"], unique=False)

    op.create_table(
        "images",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("visibility", sa.String(length=255), nullable=False),
        sa.Column("disk_format", sa.String(length=255), nullable=True),
        sa.Column("container_format", sa.String(length=255), nullable=True),
        sa.Column("min_disk", sa.Integer(), nullable=False),
        sa.Column("min_ram", sa.Integer(), nullable=False),
        sa.Column("size", sa.Integer(), nullable=True),
        sa.Column("protected", sa.Boolean(), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=True),
        sa.Column("properties", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_images_name", "images", ["name"], unique=False)

    op.create_table(
        "networks",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=False),
        sa.Column("admin_state_up", sa.Boolean(), nullable=False),
        sa.Column("shared", sa.Boolean(), nullable=False),
        sa.Column("external", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("mtu", sa.Integer(), nullable=False),
        sa.Column("provider_network_type", sa.String(length=255), nullable=True),
        sa.Column("provider_physical_network", sa.String(length=255), nullable=True),
        sa.Column("provider_segmentation_id", sa.Integer(), nullable=True),
        sa.Column("description", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_networks_name", "networks", ["name"], unique=False)

    op.create_table(
        "subnets",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("network_id", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=False),
        sa.Column("ip_version", sa.Integer(), nullable=False),
        sa.Column("cidr", sa.String(length=255), nullable=False),
        sa.Column("gateway_ip", sa.String(length=255), nullable=True),
        sa.Column("allocation_pools", sa.JSON(), nullable=True),
        sa.Column("enable_dhcp", sa.Boolean(), nullable=False),
        sa.Column("dns_nameservers", sa.JSON(), nullable=True),
        sa.Column("ipv6_address_mode", sa.String(length=255), nullable=True),
        sa.Column("ipv6_ra_mode", sa.String(length=255), nullable=True),
        sa.Column("description", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_subnets_network", "subnets", ["network_id"], unique=False)

    op.create_table(
        "ports",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("network_id", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=False),
        sa.Column("mac_address", sa.String(length=255), nullable=False),
        sa.Column("admin_state_up", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("device_id", sa.String(length=255), nullable=False),
        sa.Column("device_owner", sa.String(length=255), nullable=False),
        sa.Column("binding_host_id", sa.String(length=255), nullable=False),
        sa.Column("binding_vnic_type", sa.String(length=255), nullable=False),
        sa.Column("binding_profile", sa.JSON(), nullable=True),
        sa.Column("binding_vif_type", sa.String(length=255), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("network_id", "mac_address", name="uq_ports_network_mac"),
    )
    op.create_index("ix_ports_device", "ports", ["device_id"], unique=False)
    op.create_index("ix_ports_name", "ports", ["name"], unique=False)

    op.create_table(
        "ip_allocations",
        sa.Column("subnet_id", sa.String(length=255), nullable=False),
        sa.Column("ip_address", sa.String(length=255), nullable=False),
        sa.Column("network_id", sa.String(length=255), nullable=False),
        sa.Column("port_id", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("subnet_id", "ip_address"),
    )
    op.create_index("ix_ip_allocations_port", "ip_allocations", ["port_id"], unique=False)

    op.create_table(
        "nodes",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("driver", sa.String(length=255), nullable=False),
        sa.Column("provision_state", sa.String(length=255), nullable=False),
        sa.Column("target_provision_state", sa.String(length=255), nullable=True),
        sa.Column("power_state", sa.String(length=255), nullable=False),
        sa.Column("target_power_state", sa.String(length=255), nullable=True),
        sa.Column("maintenance", sa.Boolean(), nullable=False),
        sa.Column("maintenance_reason", sa.String(length=255), nullable=True),
        sa.Column("instance_uuid", sa.String(length=255), nullable=True),
        sa.Column("instance_info", sa.JSON(), nullable=True),
        sa.Column("properties", sa.JSON(), nullable=True),
        sa.Column("driver_info", sa.JSON(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("resource_class", sa.String(length=255), nullable=True),
        sa.Column("chassis_uuid", sa.String(length=255), nullable=True),
        sa.Column("last_error", sa.String(length=255), nullable=True),
        sa.Column("reservation", sa.String(length=255), nullable=True),
        sa.Column("provision_updated_at", sa.Float(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("name", name="uq_nodes_name"),
        sa.UniqueConstraint("instance_uuid", name="uq_nodes_instance"),
    )

    op.create_table(
        "node_ports",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("address", sa.String(length=255), nullable=False),
        sa.Column("node_uuid", sa.String(length=255), nullable=False),
        sa.Column("portgroup_uuid", sa.String(length=255), nullable=True),
        sa.Column("physical_network", sa.String(length=255), nullable=True),
        sa.Column("pxe_enabled", sa.Boolean(), nullable=False),
        sa.Column("local_link_connection", sa.JSON(), nullable=True),
        sa.Column("internal_info", sa.JSON(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("address", name="uq_node_ports_address"),
    )
    op.create_index("ix_node_ports_node", "node_ports", ["node_uuid"], unique=False)

    op.create_table(
        "portgroups",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("node_uuid", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("address", sa.String(length=255), nullable=True),
        sa.Column("mode", sa.String(length=255), nullable=True),
        sa.Column("standalone_ports_supported", sa.Boolean(), nullable=False),
        sa.Column("internal_info", sa.JSON(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("uuid"),
    )
    op.create_index("ix_portgroups_node", "portgroups", ["node_uuid"], unique=False)

    op.create_table(
        "chassis",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("description", sa.String(length=255), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("uuid"),
    )

    op.create_table(
        "flavors",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("vcpus", sa.Integer(), nullable=False),
        sa.Column("ram", sa.Integer(), nullable=False),
        sa.Column("disk", sa.Integer(), nullable=False),
        sa.Column("ephemeral", sa.Integer(), nullable=False),
        sa.Column("swap", sa.Integer(), nullable=False),
        sa.Column("is_public", sa.Boolean(), nullable=False),
        sa.Column("resource_class", sa.String(length=255), nullable=True),
        sa.Column("extra_specs", sa.JSON(), nullable=True),
        sa.Column("description", sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name", name="uq_flavors_name"),
    )

    op.create_table(
        "hypervisors",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("hostname", sa.String(length=255), nullable=False),
        sa.Column("vcpus", sa.Integer(), nullable=False),
        sa.Column("memory_mb", sa.Integer(), nullable=False),
        sa.Column("local_gb", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("hostname", name="uq_hypervisors_hostname"),
    )

    op.create_table(
        "instances",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("flavor_id", sa.String(length=255), nullable=False),
        sa.Column("image_id", sa.String(length=255), nullable=True),
        sa.Column("vm_state", sa.String(length=255), nullable=False),
        sa.Column("task_state", sa.String(length=255), nullable=True),
        sa.Column("power_state", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("node", sa.String(length=255), nullable=True),
        sa.Column("is_baremetal", sa.Boolean(), nullable=False),
        sa.Column("requested_networks", sa.JSON(), nullable=True),
        sa.Column("metadata", sa.JSON(), nullable=True),
        sa.Column("key_name", sa.String(length=255), nullable=True),
        sa.Column("deadline", sa.Float(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("launched_at", sa.Float(), nullable=True),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("deleted_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("uuid"),
    )
    op.create_index("ix_instances_name", "instances", ["name"], unique=False)
    op.create_index("ix_instances_project", "instances", ["project_id"], unique=False)

    op.create_table(
        "instance_vifs",
        sa.Column("instance_uuid", sa.String(length=255), nullable=False),
        sa.Column("port_id", sa.String(length=255), nullable=False),
        sa.Column("network_id", sa.String(length=255), nullable=False),
        sa.Column("address", sa.String(length=255), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("preserve_on_delete", sa.Boolean(), nullable=False),
        sa.Column("fixed_ips", sa.JSON(), nullable=True),
        sa.Column("tag", sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint("instance_uuid", "port_id"),
    )

    op.create_table(
        "instance_actions",
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("instance_uuid", sa.String(length=255), nullable=False),
        sa.Column("action", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("start_time", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("message", sa.String(length=255), nullable=True),
        sa.PrimaryKeyConstraint("request_id", "instance_uuid"),
    )

    op.create_table(
        "action_events",
        sa.Column("request_id", sa.String(length=255), nullable=False),
        sa.Column("event", sa.String(length=255), nullable=False),
        sa.Column("start_time", sa.Float(), nullable=False),
        sa.Column("finish_time", sa.Float(), nullable=True),
        sa.Column("result", sa.String(length=255), nullable=True),
        sa.Column("traceback", sa.Text(), nullable=True),
        sa.Column("host", sa.String(length=255), nullable=True),
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_action_events_request", "action_events", ["request_id"], unique=False)

    op.create_table(
        "instance_faults",
        sa.Column("instance_uuid", sa.String(length=255), nullable=False),
        sa.Column("code", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_instance_faults_instance", "instance_faults", ["instance_uuid"], unique=False)

    op.create_table(
        "intents",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_intents_key", "intents", ["key"], unique=False)

    tether_schema = op.create_table(
        "tether_schema",
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("version"),
    )
    op.bulk_insert(tether_schema, [{"version": 1}])


def downgrade() -> None:
    # Indexes go with their tables.
    for table in reversed(TABLES):
        op.drop_table(table)
