"""A desktop's owner lets other portal users watch it, view-only.

Revision ID: 0022_session_viewers
Revises: 0021_idle_sessions
Create Date: 2026-11-27 20:10:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0022_session_viewers'
down_revision: str | None = '0021_idle_sessions'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'interactive_session_viewers',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('session_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['session_id'], ['interactive_sessions.id'],
            name=op.f('fk_interactive_session_viewers_session_id_interactive_sessions'),
            ondelete='CASCADE',
        ),
        sa.ForeignKeyConstraint(
            ['user_id'], ['users.id'],
            name=op.f('fk_interactive_session_viewers_user_id_users'), ondelete='CASCADE',
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_interactive_session_viewers')),
        sa.UniqueConstraint(
            'session_id', 'user_id', name=op.f('uq_interactive_session_viewers_session_id_user_id')
        ),
    )


def downgrade() -> None:
    op.drop_table('interactive_session_viewers')
