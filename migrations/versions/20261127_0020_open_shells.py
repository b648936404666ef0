"""Open shells are counted in the database, so a user's limit holds across web workers.

Revision ID: 0020_open_shells
Revises: 0019_spent_app_tickets
Create Date: 2026-11-27 21:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0020_open_shells'
down_revision: str | None = '0019_spent_app_tickets'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'open_shells',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('cluster', sa.String(length=64), nullable=False),
        sa.Column('opened_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('seen_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ['user_id'], ['users.id'], name=op.f('fk_open_shells_user_id_users'), ondelete='CASCADE'
        ),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_open_shells')),
    )
    with op.batch_alter_table('open_shells', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_open_shells_user_id'), ['user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_open_shells_seen_at'), ['seen_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('open_shells', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_open_shells_seen_at'))
        batch_op.drop_index(batch_op.f('ix_open_shells_user_id'))
    op.drop_table('open_shells')
