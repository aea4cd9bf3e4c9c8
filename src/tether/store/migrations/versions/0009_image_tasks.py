"""Glance's tasks (/v2/tasks).

Revision ID: 0009_image_tasks
Revises: 0008_compute_actions
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009_image_tasks"
down_revision = "0008_compute_actions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "image_tasks",
        sa.Column("id", sa.String(length=255), primary_key=True),
        sa.Column("type", sa.String(length=255), nullable=False),
        sa.Column("owner", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("input", sa.JSON(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("image_tasks")
