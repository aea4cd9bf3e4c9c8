"""Compute resources: keypairs, quota limits, server groups, aggregates, flavor access, service state,
multi-create's reservation ids

Revision ID: 0007_compute_resources
Revises: 0006_image
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007_compute_resources'
down_revision = '0006_image'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('aggregates',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('name', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('hosts', sa.JSON(), autoincrement=False, nullable=True),
    sa.Column('metadata', sa.JSON(), autoincrement=False, nullable=True),
    sa.Column('created_at', sa.Float(), autoincrement=False, nullable=False),
    sa.Column('updated_at', sa.Float(), autoincrement=False, nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid', name='uq_aggregates_uuid')
    )
    op.create_table('flavor_projects',
    sa.Column('flavor_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('project_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('flavor_id', 'project_id')
    )
    op.create_table('keypairs',
    sa.Column('user_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('name', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('public_key', sa.Text(), autoincrement=False, nullable=False),
    sa.Column('fingerprint', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('type', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('created_at', sa.Float(), autoincrement=False, nullable=False),
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('user_id', 'name', name='uq_keypairs_user_name')
    )
    op.create_table('quota_limits',
    sa.Column('project_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('user_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('resource', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('hard_limit', sa.Integer(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('project_id', 'user_id', 'resource')
    )
    op.create_table('server_group_members',
    sa.Column('group_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('instance_uuid', sa.String(length=255), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('group_id', 'instance_uuid')
    )
    with op.batch_alter_table('server_group_members', schema=None) as batch_op:
        batch_op.create_index('ix_server_group_members_instance', ['instance_uuid'], unique=False)

    op.create_table('server_groups',
    sa.Column('id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('name', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('project_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('user_id', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('policy', sa.String(length=255), autoincrement=False, nullable=False),
    sa.Column('rules', sa.JSON(), autoincrement=False, nullable=True),
    sa.Column('created_at', sa.Float(), autoincrement=False, nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('server_groups', schema=None) as batch_op:
        batch_op.create_index('ix_server_groups_project', ['project_id'], unique=False)

    with op.batch_alter_table('instances', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reservation_id', sa.String(length=255), autoincrement=False, nullable=True))
        batch_op.add_column(sa.Column('launch_index', sa.Integer(), autoincrement=False, nullable=False,
                                      server_default='0'))

    with op.batch_alter_table('hypervisors', schema=None) as batch_op:
        batch_op.add_column(sa.Column('disabled_reason', sa.String(length=255), autoincrement=False, nullable=True))
        batch_op.add_column(sa.Column('forced_down', sa.Boolean(), autoincrement=False, nullable=False,
                                      server_default=sa.false()))



def downgrade() -> None:
    with op.batch_alter_table('instances', schema=None) as batch_op:
        batch_op.drop_column('launch_index')
        batch_op.drop_column('reservation_id')

    with op.batch_alter_table('hypervisors', schema=None) as batch_op:
        batch_op.drop_column('forced_down')
        batch_op.drop_column('disabled_reason')

    with op.batch_alter_table('server_groups', schema=None) as batch_op:
        batch_op.drop_index('ix_server_groups_project')

    op.drop_table('server_groups')
    with op.batch_alter_table('server_group_members', schema=None) as batch_op:
        batch_op.drop_index('ix_server_group_members_instance')

    op.drop_table('server_group_members')
    op.drop_table('quota_limits')
    op.drop_table('keypairs')
    op.drop_table('flavor_projects')
    op.drop_table('aggregates')
