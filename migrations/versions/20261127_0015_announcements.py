"""Announcements (an administrator's, or a cluster's maintenance window), who dismissed
them, and each user's colour scheme.

Revision ID: 0015_announcements
Revises: 0013_jobs_owner_project_stats
Create Date: 2026-11-27 17:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0015_announcements'
down_revision: str | None = '0013_jobs_owner_project_stats'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'announcements',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('source', sa.String(length=16), nullable=False),
        sa.Column('body', sa.Text(), nullable=False),
        sa.Column('shown_from', sa.DateTime(timezone=True), nullable=False),
        sa.Column('shown_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('is_dismissible', sa.Boolean(), nullable=False),
        sa.Column('created_by_id', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('cluster', sa.String(length=64), nullable=True),
        sa.Column('reservation_name', sa.String(length=200), nullable=True),
        sa.Column('window_start', sa.DateTime(timezone=True), nullable=True),
        sa.Column('window_end', sa.DateTime(timezone=True), nullable=True),
        sa.Column('partition', sa.String(length=64), nullable=True),
        sa.CheckConstraint(
            "source IN ('admin', 'maintenance')", name=op.f('ck_announcements_source')
        ),
        sa.ForeignKeyConstraint(
            ['created_by_id'], ['users.id'],
            name=op.f('fk_announcements_created_by_id_users'), ondelete='SET NULL',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_announcements')),
        sa.UniqueConstraint(
            'cluster', 'reservation_name', name=op.f('uq_announcements_cluster_reservation_name')
        ),
    )
    op.create_index(
        'ix_announcements_shown_until', 'announcements', ['shown_until'], unique=False
    )
    op.create_table(
        'announcement_dismissals',
        sa.Column('announcement_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('dismissed_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['announcement_id'], ['announcements.id'],
            name=op.f('fk_announcement_dismissals_announcement_id_announcements'),
            ondelete='CASCADE',
        ),
        sa.ForeignKeyConstraint(
            ['user_id'], ['users.id'],
            name=op.f('fk_announcement_dismissals_user_id_users'), ondelete='CASCADE',
        ),
        sa.PrimaryKeyConstraint(
            'announcement_id', 'user_id', name=op.f('pk_announcement_dismissals')
        ),
    )
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('theme', sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('users') as batch:
        batch.drop_column('theme')
    op.drop_table('announcement_dismissals')
    op.drop_index('ix_announcements_shown_until', table_name='announcements')
    op.drop_table('announcements')
