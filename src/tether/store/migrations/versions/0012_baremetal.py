"""Bare metal: a node's hardware interfaces, description, owner and lessee, protected and retired flags,
traits, console and allocation; the allocations table.

Revision ID: 0012_baremetal
Revises: 0011_network
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_baremetal"
down_revision = "0011_network"
branch_labels = None
depends_on = None

# fake-hardware's defaults when this revision was written: what nodes enrolled before it are given.
_INTERFACES = {
    "bios_interface": "fake", "boot_interface": "fake", "console_interface": "fake", "deploy_interface": "fake",
    "firmware_interface": "fake", "inspect_interface": "fake", "management_interface": "fake",
    "network_interface": "flat", "power_interface": "fake", "raid_interface": "fake", "rescue_interface": "fake",
    "storage_interface": "fake", "vendor_interface": "fake",
}
_STRINGS = (*_INTERFACES, "owner", "lessee", "protected_reason", "retired_reason", "allocation_uuid")
_FLAGS = ("protected", "retired", "console_enabled")


def upgrade() -> None:
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        for name in _STRINGS:
            batch_op.add_column(sa.Column(name, sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("description", sa.Text(), nullable=True))
        for name in _FLAGS:
            batch_op.add_column(sa.Column(name, sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column("traits", sa.JSON(), nullable=True))
    nodes = sa.table("nodes", *(sa.column(name) for name in _INTERFACES), sa.column("traits", sa.JSON()))
    op.execute(nodes.update().values(traits=[], **_INTERFACES))

    op.create_table(
        "allocations",
        sa.Column("uuid", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=True),
        sa.Column("node_uuid", sa.String(length=255), nullable=True),
        sa.Column("state", sa.String(length=255), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("resource_class", sa.String(length=255), nullable=True),
        sa.Column("traits", sa.JSON(), nullable=True),
        sa.Column("candidate_nodes", sa.JSON(), nullable=True),
        sa.Column("extra", sa.JSON(), nullable=True),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("uuid"),
        sa.UniqueConstraint("name", name="uq_allocations_name"),
    )
    op.create_index("ix_allocations_node", "allocations", ["node_uuid"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_allocations_node", table_name="allocations")
    op.drop_table("allocations")
    with op.batch_alter_table("nodes", schema=None) as batch_op:
        for name in ("traits", *reversed(_FLAGS), "description", *reversed(_STRINGS)):
            batch_op.drop_column(name)
