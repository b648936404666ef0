"""Server-side web sessions and failed sign-in attempts.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 04:40:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0002'
down_revision: str | None = '0001'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('web_sessions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('csrf_token', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_seen_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_web_sessions_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_web_sessions')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_web_sessions_token_hash'))
    )
    op.create_index(op.f('ix_web_sessions_user_id'), 'web_sessions', ['user_id'], unique=False)
    op.create_table('sign_in_attempts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('login', sa.String(length=64), nullable=False),
    sa.Column('address', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_sign_in_attempts'))
    )
    op.create_index('ix_sign_in_attempts_address_created_at', 'sign_in_attempts', ['address', 'created_at'], unique=False)
    op.create_index('ix_sign_in_attempts_login_created_at', 'sign_in_attempts', ['login', 'created_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_sign_in_attempts_login_created_at', table_name='sign_in_attempts')
    op.drop_index('ix_sign_in_attempts_address_created_at', table_name='sign_in_attempts')
    op.drop_table('sign_in_attempts')
    op.drop_index(op.f('ix_web_sessions_user_id'), table_name='web_sessions')
    op.drop_table('web_sessions')
