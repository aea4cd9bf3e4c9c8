"""Identity: a re-scoped token remembers the audit id it was made from (keystone's audit chain).

Revision ID: 0013_tokens
Revises: 0012_baremetal
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013_tokens"
down_revision = "0012_baremetal"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_audit_id", sa.String(length=255), autoincrement=False, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_column("parent_audit_id")
