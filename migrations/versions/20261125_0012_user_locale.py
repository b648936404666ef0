"""The interface language a user chose (null: follow the browser).

Revision ID: 0012_user_locale
Revises: 0011_notifications
Create Date: 2026-11-25 07:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0012_user_locale'
down_revision: str | None = '0011_notifications'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('locale', sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('users') as batch:
        batch.drop_column('locale')
