"""Compute actions and server updates: locks, descriptions, access IPs, tags, a resize's old flavor.

Revision ID: 0008_compute_actions
Revises: 0007_compute_resources
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008_compute_actions"
down_revision = "0007_compute_resources"
branch_labels = None
depends_on = None

_COLUMNS = ("locked_by", "locked_reason", "description", "access_ip_v4", "access_ip_v6", "tags", "old_flavor_id")


def upgrade() -> None:
    with op.batch_alter_table("instances", schema=None) as batch_op:
        for name in _COLUMNS:
            column_type: sa.types.TypeEngine = sa.JSON() if name == "tags" else sa.String(length=255)
            batch_op.add_column(sa.Column(name, column_type, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("instances", schema=None) as batch_op:
        for name in reversed(_COLUMNS):
            batch_op.drop_column(name)
