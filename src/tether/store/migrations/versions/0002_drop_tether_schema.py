"""Drop ``tether_schema``: ``alembic_version`` alone says which schema a database has.

Two records of the version could disagree, and only Alembic's is read when upgrading. The
release before migrations never read the old one either (it only wrote it when missing), so
nothing loses a check it relied on.

Revision ID: 0002_drop_tether_schema
Revises: 0001_baseline
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_drop_tether_schema"
down_revision = "0001_baseline"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("tether_schema")


def downgrade() -> None:
    # As the baseline left it, so the release before migrations opens the database as its own.
    tether_schema = op.create_table(
        "tether_schema",
        sa.Column("version", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("version"),
    )
    op.bulk_insert(tether_schema, [{"version": 1}])
