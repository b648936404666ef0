"""A desktop remembers when someone last had it open through the portal (its idle probe).

Revision ID: 0023_desktop_viewed_at
Revises: 0022_session_viewers
Create Date: 2026-11-27 21:30:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0023_desktop_viewed_at'
down_revision: str | None = '0022_session_viewers'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('interactive_sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('viewed_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('interactive_sessions', schema=None) as batch_op:
        batch_op.drop_column('viewed_at')
