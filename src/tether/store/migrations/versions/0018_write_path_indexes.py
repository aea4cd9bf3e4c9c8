"""Two indexes that every write paid for and no read needed.

- ``ix_nodes_reservation``: the node lock is written to ``reservation`` at every take and every
  release (fourteen times in one bare-metal boot and delete), and each write moved an entry of this
  index too; the one read by reservation is start-up's look for a dead incarnation's locks, once,
  over a table of nodes.
- ``ix_instances_project``: its one column leads ``ix_instances_project_created``, which serves every
  lookup by project that it served.

Revision ID: 0018_write_path_indexes
Revises: 0017_list_indexes2
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0018_write_path_indexes"
down_revision = "0017_list_indexes2"
branch_labels = None
depends_on = None

# table -> (index name, columns)
INDEXES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "nodes": (("ix_nodes_reservation", ("reservation",)),),
    "instances": (("ix_instances_project", ("project_id",)),),
}


def upgrade() -> None:
    for table, indexes in INDEXES.items():
        for name, _ in indexes:
            op.drop_index(name, table_name=table)


def downgrade() -> None:
    for table, indexes in reversed(INDEXES.items()):
        for name, columns in reversed(indexes):
            op.create_index(name, table, list(columns), unique=False)
