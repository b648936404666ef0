"""Sign-in throttling by atomic counters per login, address and site instead of a row per failure.

Revision ID: 0005_sign_in_counters
Revises: 0004_request
Create Date: 2026-11-23 12:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0005_sign_in_counters'
down_revision: str | None = '0004_request'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('sign_in_counters',
    sa.Column('key', sa.String(length=200), nullable=False),
    sa.Column('window_start', sa.DateTime(timezone=True), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_sign_in_counters'))
    )
    op.create_index(op.f('ix_sign_in_counters_window_start'), 'sign_in_counters', ['window_start'], unique=False)
    op.drop_index('ix_sign_in_attempts_login_created_at', table_name='sign_in_attempts')
    op.drop_index('ix_sign_in_attempts_address_created_at', table_name='sign_in_attempts')
    op.drop_table('sign_in_attempts')


def downgrade() -> None:
    op.create_table('sign_in_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('login', sa.String(length=64), nullable=False),
    sa.Column('address', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sign_in_attempts'))
    )
    op.create_index('ix_sign_in_attempts_address_created_at', 'sign_in_attempts', ['address', 'created_at'], unique=False)
    op.create_index('ix_sign_in_attempts_login_created_at', 'sign_in_attempts', ['login', 'created_at'], unique=False)
    op.drop_index(op.f('ix_sign_in_counters_window_start'), table_name='sign_in_counters')
    op.drop_table('sign_in_counters')
