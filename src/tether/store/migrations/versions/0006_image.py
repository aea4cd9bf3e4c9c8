"""Image data, members and metadata definitions: an image's checksum and secure hash; the projects a
shared image is offered to; glance's metadefs namespaces.

Revision ID: 0006_image
Revises: 0005_auth_lockout
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_image"
down_revision = "0005_auth_lockout"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("images", schema=None) as batch_op:
        batch_op.add_column(sa.Column("checksum", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("os_hash_algo", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("os_hash_value", sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column("os_hidden", sa.Boolean(), nullable=False, server_default=sa.false()))

    op.create_table(
        "image_members",
        sa.Column("image_id", sa.String(length=255), nullable=False),
        sa.Column("member_id", sa.String(length=255), nullable=False),
        sa.Column("status", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("image_id", "member_id"),
    )
    with op.batch_alter_table("image_members", schema=None) as batch_op:
        batch_op.create_index("ix_image_members_member", ["member_id"], unique=False)

    op.create_table(
        "metadef_namespaces",
        sa.Column("namespace", sa.String(length=255), nullable=False),
        sa.Column("owner", sa.String(length=255), nullable=True),
        sa.Column("display_name", sa.String(length=255), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("visibility", sa.String(length=255), nullable=False),
        sa.Column("protected", sa.Boolean(), nullable=False),
        sa.Column("resource_types", sa.JSON(), nullable=True),
        sa.Column("objects", sa.JSON(), nullable=True),
        sa.Column("properties", sa.JSON(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("namespace"),
    )


def downgrade() -> None:
    op.drop_table("metadef_namespaces")
    with op.batch_alter_table("image_members", schema=None) as batch_op:
        batch_op.drop_index("ix_image_members_member")
    op.drop_table("image_members")
    with op.batch_alter_table("images", schema=None) as batch_op:
        batch_op.drop_column("os_hidden")
        batch_op.drop_column("os_hash_value")
        batch_op.drop_column("os_hash_algo")
        batch_op.drop_column("checksum")
