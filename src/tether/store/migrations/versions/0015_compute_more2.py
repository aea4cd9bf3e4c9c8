"""Indexes over live instances: a boot's quota count (a project's) and its scheduling (each host's) read
only the servers not deleted, however many deleted ones the table keeps.

Revision ID: 0015_compute_more2
Revises: 0014_identity_more
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0015_compute_more2"
down_revision = "0016_baremetal_more"
branch_labels = None
depends_on = None

# (index name, columns): as tables.py declares them
INDEXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ix_instances_live_project", ("deleted", "project_id", "flavor_id")),
    ("ix_instances_live_hosts", ("deleted", "is_baremetal", "host", "flavor_id")),
)


def upgrade() -> None:
    for name, columns in INDEXES:
        op.create_index(name, "instances", list(columns), unique=False)


def downgrade() -> None:
    for name, _ in reversed(INDEXES):
        op.drop_index(name, table_name="instances")
