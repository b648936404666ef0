"""Jobs keep Slurm's own number for the record: an array task's differs from its array's,
and log paths with ``%j`` need it.

Revision ID: 0008_slurm_raw_id
Revises: 0007_expected_start
Create Date: 2026-11-24 19:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0008_slurm_raw_id'
down_revision: str | None = '0007_expected_start'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('slurm_raw_id', sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('slurm_raw_id')
