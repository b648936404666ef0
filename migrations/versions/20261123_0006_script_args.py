"""Jobs keep the arguments their script was given (``sbatch job.sh ARG…``), for resubmission.

Revision ID: 0006_script_args
Revises: 0005_sign_in_counters
Create Date: 2026-11-23 14:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0006_script_args'
down_revision: str | None = '0005_sign_in_counters'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('script_args', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('script_args')
