"""Identity admin: groups, system and domain grants, catalog, application credentials.

A role assignment"s key grows from (user, project, role) to keystone"s (actor, target, role); the
rows are carried over, and whoever held admin on the Default domain"s "admin" project (which gave a
system-scoped token before there were system grants) now holds admin on the system, as
``keystone-manage bootstrap`` grants it.

Revision ID: 0004_identity
Revises: 0003_orchestration
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_identity"
down_revision = "0003_orchestration"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("application_credentials",
    sa.Column("id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("name", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("user_id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("project_id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("secret_hash", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("description", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("expires_at", sa.Float(), autoincrement=False, nullable=True),
    sa.Column("unrestricted", sa.Boolean(), autoincrement=False, nullable=False),
    sa.Column("role_ids", sa.JSON(), autoincrement=False, nullable=True),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("user_id", "name")
    )
    op.create_table("catalog_services",
    sa.Column("id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("type", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("name", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("description", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("enabled", sa.Boolean(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint("id")
    )
    op.create_table("endpoints",
    sa.Column("id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("service_id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("interface", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("url", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("region_id", sa.String(length=255), autoincrement=False, nullable=True),
    sa.Column("enabled", sa.Boolean(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint("id")
    )
    with op.batch_alter_table("endpoints", schema=None) as batch_op:
        batch_op.create_index("ix_endpoints_service", ["service_id"], unique=False)

    op.create_table("group_members",
    sa.Column("group_id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("user_id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint("group_id", "user_id")
    )
    with op.batch_alter_table("group_members", schema=None) as batch_op:
        batch_op.create_index("ix_group_members_user", ["user_id"], unique=False)

    op.create_table("groups",
    sa.Column("id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("name", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("domain_id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("description", sa.String(length=255), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint("id"),
    sa.UniqueConstraint("domain_id", "name")
    )
    op.create_table("regions",
    sa.Column("id", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("description", sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column("parent_region_id", sa.String(length=255), autoincrement=False, nullable=True),
    sa.PrimaryKeyConstraint("id")
    )
    with op.batch_alter_table("domains", schema=None) as batch_op:
        batch_op.add_column(sa.Column("description", sa.String(length=255), autoincrement=False, nullable=False,
                                      server_default=""))

    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parent_id", sa.String(length=255), autoincrement=False, nullable=True))
        batch_op.add_column(sa.Column("tags", sa.JSON(), autoincrement=False, nullable=True))
        batch_op.add_column(sa.Column("extra", sa.JSON(), autoincrement=False, nullable=True))

    _rekey_role_assignments()

    with op.batch_alter_table("roles", schema=None) as batch_op:
        batch_op.add_column(sa.Column("description", sa.String(length=255), autoincrement=False, nullable=False,
                                      server_default=""))

    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("domain_id", sa.String(length=255), autoincrement=False, nullable=True))
        batch_op.add_column(sa.Column("domain_name", sa.String(length=255), autoincrement=False, nullable=True))
        batch_op.add_column(sa.Column("application_credential_id", sa.String(length=255), autoincrement=False,
                                      nullable=True))

    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.add_column(sa.Column("description", sa.String(length=255), autoincrement=False, nullable=False,
                                      server_default=""))
        batch_op.add_column(sa.Column("extra", sa.JSON(), autoincrement=False, nullable=True))



    op.execute(sa.text("UPDATE projects SET tags = '[]', extra = '{}'"))
    op.execute(sa.text("UPDATE users SET extra = '{}'"))
    for table in ("domains", "roles", "users"):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column("description", server_default=None)


def _rekey_role_assignments() -> None:
    """(user, project, role) -> (user, group, project, domain, system, role); the rows are read out
    and written back, since SQLite cannot change a key in place and a renamed table would keep its
    key"s name on PostgreSQL."""
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT user_id, project_id, role_id FROM role_assignments")).all()
    admin = bind.execute(sa.text(
        "SELECT a.user_id, a.role_id FROM role_assignments a JOIN projects p ON p.id = a.project_id "
        "JOIN roles r ON r.id = a.role_id WHERE p.name = 'admin' AND p.domain_id = 'default' AND r.name = 'admin'"
    )).all()
    op.drop_table("role_assignments")
    table = op.create_table(
        "role_assignments",
        sa.Column("role_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.Column("project_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.Column("group_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.Column("domain_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.Column("system", sa.String(length=255), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("user_id", "group_id", "project_id", "domain_id", "system", "role_id"),
    )
    with op.batch_alter_table("role_assignments", schema=None) as batch_op:
        batch_op.create_index("ix_role_assignments_role", ["role_id"], unique=False)
    blank = {"user_id": "", "project_id": "", "group_id": "", "domain_id": "", "system": ""}
    values = [{**blank, "user_id": user, "project_id": project, "role_id": role} for user, project, role in rows]
    values += [{**blank, "user_id": user, "system": "all", "role_id": role} for user, role in admin]
    if values:
        op.bulk_insert(table, values)


def _unkey_role_assignments() -> None:
    bind = op.get_bind()
    rows = bind.execute(sa.text(
        "SELECT user_id, project_id, role_id FROM role_assignments WHERE user_id != '' AND project_id != ''"
    )).all()
    op.drop_table("role_assignments")
    table = op.create_table(
        "role_assignments",
        sa.Column("user_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.Column("project_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.Column("role_id", sa.String(length=255), autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("user_id", "project_id", "role_id"),
    )
    if rows:
        op.bulk_insert(table, [{"user_id": u, "project_id": p, "role_id": r} for u, p, r in rows])


def downgrade() -> None:
    with op.batch_alter_table("users", schema=None) as batch_op:
        batch_op.drop_column("extra")
        batch_op.drop_column("description")

    with op.batch_alter_table("tokens", schema=None) as batch_op:
        batch_op.drop_column("application_credential_id")
        batch_op.drop_column("domain_name")
        batch_op.drop_column("domain_id")

    with op.batch_alter_table("roles", schema=None) as batch_op:
        batch_op.drop_column("description")

    _unkey_role_assignments()

    with op.batch_alter_table("projects", schema=None) as batch_op:
        batch_op.drop_column("extra")
        batch_op.drop_column("tags")
        batch_op.drop_column("parent_id")

    with op.batch_alter_table("domains", schema=None) as batch_op:
        batch_op.drop_column("description")

    op.drop_table("regions")
    op.drop_table("groups")
    with op.batch_alter_table("group_members", schema=None) as batch_op:
        batch_op.drop_index("ix_group_members_user")

    op.drop_table("group_members")
    with op.batch_alter_table("endpoints", schema=None) as batch_op:
        batch_op.drop_index("ix_endpoints_service")

    op.drop_table("endpoints")
    op.drop_table("catalog_services")
    op.drop_table("application_credentials")
