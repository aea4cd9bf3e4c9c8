"""Server names' substring index, and indexes for start-up's look at instances and instance actions' pages.

Revision ID: 0017_list_indexes2
Revises: 0014_identity_more
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

from tether.store import name_search

revision = "0017_list_indexes2"
down_revision = "0015_compute_more2"
branch_labels = None
depends_on = None

# table -> (index name, columns): as tables.py declares them
INDEXES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "instances": (("ix_instances_task_state", ("task_state",)),),
    "instance_actions": (("ix_instance_actions_instance", ("instance_uuid", "start_time", "request_id")),),
}


def upgrade() -> None:
    for table, indexes in INDEXES.items():
        for name, columns in indexes:
            op.create_index(name, table, list(columns), unique=False)
    name_search.install(op.get_bind())


def downgrade() -> None:
    name_search.uninstall(op.get_bind())
    for table, indexes in reversed(INDEXES.items()):
        for name, _ in reversed(indexes):
            op.drop_index(name, table_name=table)
