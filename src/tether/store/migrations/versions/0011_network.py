"""Networking, part 2: security groups and rules, routers, floating IPs, tags, neutron quotas; port security,
allowed address pairs, extra DHCP options and security groups on ports; host routes on subnets.

Revision ID: 0011_network
Revises: 0009_list_indexes
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011_network"
down_revision = "0009_list_indexes"
branch_labels = None
depends_on = None

_PORT_LISTS = ("security_group_ids", "allowed_address_pairs", "extra_dhcp_opts")


def _string(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.String(length=255), autoincrement=False, nullable=nullable)


def _times() -> tuple[sa.Column, sa.Column]:
    return (sa.Column("created_at", sa.Float(), autoincrement=False, nullable=False),
            sa.Column("updated_at", sa.Float(), autoincrement=False, nullable=False))


def upgrade() -> None:
    op.create_table(
        "security_groups",
        _string("id"), _string("name"), _string("project_id"), _string("description"),
        sa.Column("stateful", sa.Boolean(), autoincrement=False, nullable=False),
        sa.Column("is_default", sa.Boolean(), autoincrement=False, nullable=False),
        *_times(),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_security_groups_project", "security_groups", ["project_id"])
    op.create_table(
        "security_group_rules",
        _string("id"), _string("security_group_id"), _string("project_id"), _string("direction"),
        _string("ethertype"), _string("protocol", nullable=True),
        sa.Column("port_range_min", sa.Integer(), autoincrement=False, nullable=True),
        sa.Column("port_range_max", sa.Integer(), autoincrement=False, nullable=True),
        _string("remote_ip_prefix", nullable=True), _string("remote_group_id", nullable=True),
        _string("description"), *_times(),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_security_group_rules_group", "security_group_rules", ["security_group_id"])
    op.create_table(
        "routers",
        _string("id"), _string("name"), _string("project_id"),
        sa.Column("admin_state_up", sa.Boolean(), autoincrement=False, nullable=False),
        _string("status"), _string("gateway_network_id", nullable=True),
        sa.Column("enable_snat", sa.Boolean(), autoincrement=False, nullable=False),
        sa.Column("routes", sa.JSON(), autoincrement=False, nullable=True),
        _string("description"), *_times(),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_routers_project", "routers", ["project_id"])
    op.create_table(
        "floating_ips",
        _string("id"), _string("project_id"), _string("floating_network_id"), _string("floating_ip_address"),
        _string("floating_port_id"), _string("port_id", nullable=True), _string("fixed_ip_address", nullable=True),
        _string("router_id", nullable=True), _string("status"), _string("description"), *_times(),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("floating_network_id", "floating_ip_address", name="uq_floating_ips_address"),
    )
    op.create_index("ix_floating_ips_port", "floating_ips", ["port_id"])
    op.create_table(
        "resource_tags",
        _string("resource_id"), _string("tag"), _string("resource_type"),
        sa.PrimaryKeyConstraint("resource_id", "tag"),
    )
    op.create_table(
        "network_quota_limits",
        _string("project_id"), _string("resource"),
        sa.Column("hard_limit", sa.Integer(), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("project_id", "resource"),
    )
    with op.batch_alter_table("networks", schema=None) as batch_op:
        batch_op.add_column(sa.Column("port_security_enabled", sa.Boolean(), nullable=False,
                                      server_default=sa.true()))
    with op.batch_alter_table("subnets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("host_routes", sa.JSON(), nullable=True))
    with op.batch_alter_table("ports", schema=None) as batch_op:
        batch_op.add_column(sa.Column("security_group_ids", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("port_security_enabled", sa.Boolean(), nullable=False,
                                      server_default=sa.true()))
        batch_op.add_column(sa.Column("allowed_address_pairs", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("extra_dhcp_opts", sa.JSON(), nullable=True))
    # what existing rows had: no routes, no groups, no pairs, no options
    op.execute("UPDATE subnets SET host_routes = '[]'")
    for name in _PORT_LISTS:
        op.execute(f"UPDATE ports SET {name} = '[]'")


def downgrade() -> None:
    with op.batch_alter_table("ports", schema=None) as batch_op:
        for name in ("extra_dhcp_opts", "allowed_address_pairs", "port_security_enabled", "security_group_ids"):
            batch_op.drop_column(name)
    with op.batch_alter_table("subnets", schema=None) as batch_op:
        batch_op.drop_column("host_routes")
    with op.batch_alter_table("networks", schema=None) as batch_op:
        batch_op.drop_column("port_security_enabled")
    for table in ("network_quota_limits", "resource_tags", "floating_ips", "routers", "security_group_rules",
                  "security_groups"):
        op.drop_table(table)
