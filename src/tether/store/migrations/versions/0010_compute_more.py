"""Compute: what a boot gives its guest (user data, injected files, config drive, disk config), its zone,
scheduler hints and hostname, and a flavor's rxtx_factor.

Revision ID: 0010_compute_more
Revises: 0013_tokens
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010_compute_more"
down_revision = "0013_tokens"
branch_labels = None
depends_on = None

_COLUMNS: tuple[tuple[str, sa.types.TypeEngine], ...] = (
    ("user_data", sa.Text()),
    ("injected_files", sa.JSON()),
    ("config_drive", sa.String(length=255)),
    ("disk_config", sa.String(length=255)),
    ("availability_zone", sa.String(length=255)),
    ("pinned_availability_zone", sa.String(length=255)),
    ("scheduler_hints", sa.JSON()),
    ("hostname", sa.String(length=255)),
)


def upgrade() -> None:
    with op.batch_alter_table("instances", schema=None) as batch_op:
        for name, column_type in _COLUMNS:
            batch_op.add_column(sa.Column(name, column_type, nullable=True))
    with op.batch_alter_table("flavors", schema=None) as batch_op:
        batch_op.add_column(sa.Column("rxtx_factor", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("flavors", schema=None) as batch_op:
        batch_op.drop_column("rxtx_factor")
    with op.batch_alter_table("instances", schema=None) as batch_op:
        for name, _ in reversed(_COLUMNS):
            batch_op.drop_column(name)
