"""Pending jobs keep Slurm's expected start time, refreshed by the poller.

Revision ID: 0007_expected_start
Revises: 0006_script_args
Create Date: 2026-11-24 15:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0007_expected_start'
down_revision: str | None = '0006_script_args'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(
            sa.Column('expected_start_at', sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('expected_start_at')
