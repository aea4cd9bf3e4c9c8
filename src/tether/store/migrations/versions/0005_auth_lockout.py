"""Identity: each user's run of wrong passwords, for keystone's lockout.

Revision ID: 0005_auth_lockout
Revises: 0004_identity
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_auth_lockout"
down_revision = "0004_identity"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("failed_auth_count", sa.Integer(), autoincrement=False, nullable=False,
                                      server_default="0"))
        batch_op.add_column(sa.Column("failed_auth_at", sa.Float(), autoincrement=False, nullable=True))
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.alter_column("failed_auth_count", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("failed_auth_at")
        batch_op.drop_column("failed_auth_count")
