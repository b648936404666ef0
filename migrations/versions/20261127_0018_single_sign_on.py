"""Single sign-on: users bound to the provider's subject, sessions that keep their ID token,
and the sign-ins under way at the provider.

Revision ID: 0018_single_sign_on
Revises: 0014_partition_and_browser_rules
Create Date: 2026-11-27 20:30:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0018_single_sign_on'
down_revision: str | None = '0014_partition_and_browser_rules'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('sso_issuer', sa.String(length=255), nullable=True))
        batch.add_column(sa.Column('sso_subject', sa.String(length=255), nullable=True))
        batch.create_unique_constraint(
            op.f('uq_users_sso_issuer_sso_subject'), ['sso_issuer', 'sso_subject']
        )
    with op.batch_alter_table('web_sessions') as batch:
        batch.add_column(sa.Column('id_token', sa.Text(), nullable=True))
    op.create_table(
        'sso_sign_in_attempts',
        sa.Column('state_hash', sa.String(length=64), nullable=False),
        sa.Column('browser_hash', sa.String(length=64), nullable=False),
        sa.Column('nonce', sa.String(length=128), nullable=False),
        sa.Column('code_verifier', sa.String(length=128), nullable=False),
        sa.Column('next_path', sa.String(length=2000), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('state_hash', name=op.f('pk_sso_sign_in_attempts')),
    )
    op.create_index(
        op.f('ix_sso_sign_in_attempts_expires_at'), 'sso_sign_in_attempts', ['expires_at']
    )


def downgrade() -> None:
    op.drop_index(op.f('ix_sso_sign_in_attempts_expires_at'), table_name='sso_sign_in_attempts')
    op.drop_table('sso_sign_in_attempts')
    with op.batch_alter_table('web_sessions') as batch:
        batch.drop_column('id_token')
    with op.batch_alter_table('users') as batch:
        batch.drop_constraint(op.f('uq_users_sso_issuer_sso_subject'), type_='unique')
        batch.drop_column('sso_subject')
        batch.drop_column('sso_issuer')
