"""App hosts' launch tickets are spent in the database, so a ticket opens its session once
whichever web worker or replica takes the exchange.

Revision ID: 0019_spent_app_tickets
Revises: 0018_single_sign_on
Create Date: 2026-11-27 20:30:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0019_spent_app_tickets'
down_revision: str | None = '0018_single_sign_on'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'spent_app_tickets',
        sa.Column('nonce', sa.String(length=64), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('nonce', name=op.f('pk_spent_app_tickets')),
    )
    with op.batch_alter_table('spent_app_tickets', schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f('ix_spent_app_tickets_expires_at'), ['expires_at'], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table('spent_app_tickets', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_spent_app_tickets_expires_at'))
    op.drop_table('spent_app_tickets')
