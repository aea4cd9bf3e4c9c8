"""Indexes for lists paged in the database and for the lookups services and reconcilers make.

Revision ID: 0009_list_indexes
Revises: 0009_image_tasks
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0009_list_indexes"
down_revision = "0009_image_tasks"
branch_labels = None
depends_on = None

# table -> (index name, columns): as tables.py declares them
INDEXES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "ports": (("ix_ports_mac", ("mac_address",)), ("ix_ports_binding_host", ("binding_host_id",)),
              ("ix_ports_project", ("project_id", "id"))),
    "ip_allocations": (("ix_ip_allocations_address", ("ip_address",)),),
    "nodes": (("ix_nodes_created", ("created_at", "uuid")), ("ix_nodes_provision_state", ("provision_state",)),
              ("ix_nodes_maintenance", ("maintenance",)), ("ix_nodes_reservation", ("reservation",))),
    "node_ports": (("ix_node_ports_portgroup", ("portgroup_uuid",)), ("ix_node_ports_created", ("created_at", "uuid"))),
    "instances": (("ix_instances_project_created", ("project_id", "created_at", "uuid")),
                  ("ix_instances_created", ("created_at", "uuid")), ("ix_instances_host", ("host",)),
                  ("ix_instances_node", ("node",)), ("ix_instances_state", ("vm_state",))),
    "instance_vifs": (("ix_instance_vifs_port", ("port_id",)),),
    "images": (("ix_images_created", ("created_at", "id")),),
}


def upgrade() -> None:
    for table, indexes in INDEXES.items():
        for name, columns in indexes:
            op.create_index(name, table, list(columns), unique=False)


def downgrade() -> None:
    for table, indexes in reversed(INDEXES.items()):
        for name, _ in reversed(indexes):
            op.drop_index(name, table_name=table)
