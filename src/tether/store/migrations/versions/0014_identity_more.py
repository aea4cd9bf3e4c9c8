"""Identity: credentials (and OS-EC2), OAuth1 consumers, domain configurations, inherited grants, policies,
endpoint groups, domain-specific roles.

Revision ID: 0014_identity_more
Revises: 0010_compute_more
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_identity_more"
down_revision = "0010_compute_more"
branch_labels = None
depends_on = None


def _text(name: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.String(length=255), autoincrement=False, nullable=nullable)


def upgrade() -> None:
    with op.batch_alter_table("roles", schema=None) as batch_op:
        batch_op.add_column(_text("domain_id", nullable=True))
    op.create_table("inherited_role_assignments",
    _text("role_id"), _text("user_id"), _text("project_id"), _text("group_id"), _text("domain_id"), _text("system"),
    sa.PrimaryKeyConstraint("user_id", "group_id", "project_id", "domain_id", "system", "role_id"),
    )
    with op.batch_alter_table("inherited_role_assignments", schema=None) as batch_op:
        batch_op.create_index("ix_inherited_role_assignments_role", ["role_id"], unique=False)
    op.create_table("credentials",
    _text("id"), _text("user_id"), _text("type"),
    sa.Column("blob", sa.Text(), autoincrement=False, nullable=False),
    _text("project_id", nullable=True),
    sa.Column("extra", sa.JSON(), autoincrement=False, nullable=True),
    sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.create_index("ix_credentials_user", ["user_id"], unique=False)
    op.create_table("oauth_consumers",
    _text("id"), _text("secret_hash"), _text("description", nullable=True),
    sa.Column("extra", sa.JSON(), autoincrement=False, nullable=True),
    sa.PrimaryKeyConstraint("id"),
    )
    op.create_table("domain_configs",
    _text("domain_id"),
    sa.Column("options", sa.JSON(), autoincrement=False, nullable=True),
    sa.Column("sensitive", sa.JSON(), autoincrement=False, nullable=True),
    sa.PrimaryKeyConstraint("domain_id"),
    )
    op.create_table("policies",
    _text("id"), _text("type"),
    sa.Column("blob", sa.Text(), autoincrement=False, nullable=False),
    sa.Column("extra", sa.JSON(), autoincrement=False, nullable=True),
    sa.PrimaryKeyConstraint("id"),
    )
    op.create_table("endpoint_groups",
    _text("id"), _text("name"),
    sa.Column("filters", sa.JSON(), autoincrement=False, nullable=True),
    _text("description", nullable=True),
    sa.PrimaryKeyConstraint("id"),
    )


def downgrade() -> None:
    op.drop_table("endpoint_groups")
    op.drop_table("policies")
    op.drop_table("domain_configs")
    op.drop_table("oauth_consumers")
    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.drop_index("ix_credentials_user")
    op.drop_table("credentials")
    with op.batch_alter_table("inherited_role_assignments", schema=None) as batch_op:
        batch_op.drop_index("ix_inherited_role_assignments_role")
    op.drop_table("inherited_role_assignments")
    with op.batch_alter_table("roles", schema=None) as batch_op:
        batch_op.drop_column("domain_id")
