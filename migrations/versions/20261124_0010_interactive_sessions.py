"""Interactive app sessions: a job running an app server that the portal proxies to.

Revision ID: 0010_interactive_sessions
Revises: 0009_node_list
Create Date: 2026-11-24 23:50:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0010_interactive_sessions'
down_revision: str | None = '0009_node_list'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'interactive_sessions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('owner_user_id', sa.Integer(), nullable=False),
        sa.Column('job_id', sa.Integer(), nullable=False),
        sa.Column('app', sa.String(length=32), nullable=False),
        sa.Column('values', sa.JSON(), nullable=False),
        sa.Column('port', sa.Integer(), nullable=True),
        sa.Column('secret', sa.String(length=255), nullable=True),
        sa.Column('ready_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_interactive_sessions_job_id_jobs'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_interactive_sessions_owner_user_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_interactive_sessions')),
        sa.UniqueConstraint('job_id', name=op.f('uq_interactive_sessions_job_id')),
        sa.UniqueConstraint('uuid', name=op.f('uq_interactive_sessions_uuid')),
    )
    op.create_index('ix_interactive_sessions_owner_user_id_id', 'interactive_sessions', ['owner_user_id', 'id'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_interactive_sessions_owner_user_id_id', table_name='interactive_sessions')
    op.drop_table('interactive_sessions')
