"""Orchestration: stacks, their resources, ports and events; who made a port.

Revision ID: 0003_orchestration
Revises: 0002_drop_tether_schema
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_orchestration"
down_revision = "0002_drop_tether_schema"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stack_events",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("stack_id", sa.String(length=255), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("physical_resource_id", sa.String(length=255), nullable=False),
        sa.Column("resource_action", sa.String(length=255), nullable=False),
        sa.Column("resource_status", sa.String(length=255), nullable=False),
        sa.Column("resource_status_reason", sa.Text(), nullable=False),
        sa.Column("resource_type", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("sequence", sa.Integer(), autoincrement=True, nullable=False),
        sa.PrimaryKeyConstraint("sequence"),
        sa.UniqueConstraint("id", name="uq_stack_events_id"),
    )
    with op.batch_alter_table("stack_events", schema=None) as batch_op:
        batch_op.create_index("ix_stack_events_stack", ["stack_id", "sequence"], unique=False)

    op.create_table(
        "stack_ports",
        sa.Column("port_id", sa.String(length=255), nullable=False),
        sa.Column("stack_id", sa.String(length=255), nullable=False),
        sa.Column("resource_id", sa.String(length=255), nullable=False),
        sa.Column("resource_name", sa.String(length=255), nullable=False),
        sa.Column("internal", sa.Boolean(), nullable=False),
        sa.Column("network", sa.String(length=255), nullable=False),
        sa.Column("fixed_ip", sa.String(length=255), nullable=True),
        sa.Column("subnet", sa.String(length=255), nullable=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("port_id"),
    )
    with op.batch_alter_table("stack_ports", schema=None) as batch_op:
        batch_op.create_index("ix_stack_ports_resource", ["resource_id"], unique=False)
        batch_op.create_index("ix_stack_ports_stack", ["stack_id"], unique=False)

    op.create_table(
        "stack_resources",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("stack_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("state", sa.String(length=255), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("physical_id", sa.String(length=255), nullable=True),
        sa.Column("properties", sa.JSON(), nullable=True),
        sa.Column("data", sa.JSON(), nullable=True),
        sa.Column("current", sa.Boolean(), nullable=False),
        sa.Column("replaced_by", sa.String(length=255), nullable=True),
        sa.Column("traversal", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("stack_resources", schema=None) as batch_op:
        batch_op.create_index("ix_stack_resources_physical", ["physical_id"], unique=False)
        batch_op.create_index("ix_stack_resources_stack", ["stack_id", "name"], unique=False)

    op.create_table(
        "stacks",
        sa.Column("id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("project_id", sa.String(length=255), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("user_roles", sa.JSON(), nullable=True),
        sa.Column("state", sa.String(length=255), nullable=False),
        sa.Column("status_reason", sa.Text(), nullable=False),
        sa.Column("template", sa.JSON(), nullable=True),
        sa.Column("files", sa.JSON(), nullable=True),
        sa.Column("environment", sa.JSON(), nullable=True),
        sa.Column("parameters", sa.JSON(), nullable=True),
        sa.Column("previous", sa.JSON(), nullable=True),
        sa.Column("disable_rollback", sa.Boolean(), nullable=False),
        sa.Column("timeout_mins", sa.Integer(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=True),
        sa.Column("parent_id", sa.String(length=255), nullable=True),
        sa.Column("parent_resource", sa.String(length=255), nullable=True),
        sa.Column("deadline", sa.Float(), nullable=True),
        sa.Column("traversal", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=True),
        sa.Column("deleted_at", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("stacks", schema=None) as batch_op:
        batch_op.create_index("ix_stacks_parent", ["parent_id"], unique=False)
        batch_op.create_index("ix_stacks_project_name", ["project_id", "name"], unique=False)

    with op.batch_alter_table("ports", schema=None) as batch_op:
        batch_op.add_column(sa.Column("created_for", sa.String(length=255), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("ports", schema=None) as batch_op:
        batch_op.drop_column("created_for")

    with op.batch_alter_table("stacks", schema=None) as batch_op:
        batch_op.drop_index("ix_stacks_project_name")
        batch_op.drop_index("ix_stacks_parent")

    op.drop_table("stacks")
    with op.batch_alter_table("stack_resources", schema=None) as batch_op:
        batch_op.drop_index("ix_stack_resources_stack")
        batch_op.drop_index("ix_stack_resources_physical")

    op.drop_table("stack_resources")
    with op.batch_alter_table("stack_ports", schema=None) as batch_op:
        batch_op.drop_index("ix_stack_ports_stack")
        batch_op.drop_index("ix_stack_ports_resource")

    op.drop_table("stack_ports")
    with op.batch_alter_table("stack_events", schema=None) as batch_op:
        batch_op.drop_index("ix_stack_events_stack")

    op.drop_table("stack_events")
