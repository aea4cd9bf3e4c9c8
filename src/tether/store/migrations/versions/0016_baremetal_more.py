"""Bare metal: volume connectors and targets, deploy templates, runbooks; a portgroup's properties,
physical network and category; a node's target RAID configuration and shard; inspection rules; node history.

Revision ID: 0016_baremetal_more
Revises: 0014_identity_more
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016_baremetal_more"
down_revision = "0014_identity_more"
branch_labels = None
depends_on = None


def _stamps() -> tuple[sa.Column, sa.Column]:
    return (sa.Column("created_at", sa.Float(), nullable=False), sa.Column("updated_at", sa.Float(), nullable=False))


def upgrade() -> None:
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        batch_op.add_column(sa.Column("target_raid_config", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("shard", sa.String(length=255), nullable=True))
    nodes = sa.table("nodes", sa.column("target_raid_config", sa.JSON()))
    op.execute(nodes.update().values(target_raid_config={}))
    op.create_index("ix_nodes_shard", "nodes", ["shard"], unique=False)
    with op.batch_alter_table("portgroups", schema=None) as batch_op:
        batch_op.add_column(sa.Column("properties", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("physical_network", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("category", sa.String(length=255), nullable=True))
    portgroups = sa.table("portgroups", sa.column("properties", sa.JSON()))
    op.execute(portgroups.update().values(properties={}))

    op.create_table(
        "volume_connectors",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("node_uuid", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("connector_id", sa.String(length=255), nullable=False),
        sa.Column("extra", sa.JSON(), nullable=True),
        *_stamps(),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("type", "connector_id", name="uq_volume_connectors_type_id"),
    )
    op.create_index("ix_volume_connectors_node", "volume_connectors", ["node_uuid"], unique=False)
    op.create_table(
        "volume_targets",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("node_uuid", sa.String(length=255), nullable=False),
        sa.Column("volume_type", sa.String(length=255), nullable=False),
        sa.Column("volume_id", sa.String(length=255), nullable=False),
        sa.Column("boot_index", sa.Integer(), nullable=False),
        sa.Column("properties", sa.JSON(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        *_stamps(),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("node_uuid", "boot_index", name="uq_volume_targets_node_boot_index"),
    )
    op.create_table(
        "deploy_templates",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("description", sa.String(length=255), nullable=True),
        *_stamps(),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("name", name="uq_deploy_templates_name"),
    )
    op.create_table(
        "runbooks",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("steps", sa.JSON(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("disable_ramdisk", sa.Boolean(), nullable=False),
        *_stamps(),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("name", name="uq_runbooks_name"),
    )
    op.create_table(
        "inspection_rules",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("actions", sa.JSON(), nullable=True),
        sa.Column("conditions", sa.JSON(), nullable=True),
        sa.Column("description", sa.String(length=255), nullable=True),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("sensitive", sa.Boolean(), nullable=False),
        sa.Column("phase", sa.String(length=255), nullable=True),
        *_stamps(),
        sa.PrimaryKeyConstraint("uuid"),
    )
    op.create_table(
        "node_history",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("node_uuid", sa.String(length=255), nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        sa.Column("event_type", sa.String(length=255), nullable=False),
        sa.Column("severity", sa.String(length=255), nullable=False),
        sa.Column("conductor", sa.String(length=255), nullable=True),
        sa.Column("user", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("uuid"),
    )
    op.create_index("ix_node_history_node", "node_history", ["node_uuid", "created_at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_node_history_node", table_name="node_history")
    op.drop_table("node_history")
    op.drop_table("inspection_rules")
    op.drop_table("runbooks")
    op.drop_table("deploy_templates")
    op.drop_table("volume_targets")
    op.drop_index("ix_volume_connectors_node", table_name="volume_connectors")
    op.drop_table("volume_connectors")
    with op.batch_alter_table("portgroups", schema=None) as batch_op:
        batch_op.drop_column("category")
        batch_op.drop_column("physical_network")
        batch_op.drop_column("properties")
    op.drop_index("ix_nodes_shard", table_name="nodes")
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        batch_op.drop_column("shard")
        batch_op.drop_column("target_raid_config")
