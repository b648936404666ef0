"""Pending jobs keep Slurm's expected start time; a retry of failed tasks names its array;
jobs found in the queue that were submitted outside the portal are marked.

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
        batch_op.add_column(sa.Column('retry_of_id', sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column('submitted_outside', sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch_op.create_foreign_key(
            'fk_jobs_retry_of_id_jobs', 'jobs', ['retry_of_id'], ['id'], ondelete='SET NULL'
        )


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_constraint('fk_jobs_retry_of_id_jobs', type_='foreignkey')
        batch_op.drop_column('submitted_outside')
        batch_op.drop_column('retry_of_id')
        batch_op.drop_column('expected_start_at')
