"""Jobs keep their exact request (tasks, CPUs per task, environment); clusters their partitions;
on PostgreSQL, trigram indexes for the job search.

Revision ID: 0004_request
Revises: 0003_usage
Create Date: 2026-11-22 12:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0004_request'
down_revision: str | None = '0003_usage'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TRIGRAM_COLUMNS = ('name', 'slurm_job_id')


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('ntasks', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('cpus_per_task', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('environment', sa.JSON(), nullable=True))
    with op.batch_alter_table('cluster_status', schema=None) as batch_op:
        batch_op.add_column(sa.Column('partitions', sa.JSON(), nullable=True))
        batch_op.add_column(
            sa.Column('partitions_at', sa.DateTime(timezone=True), nullable=True)
        )
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('CREATE EXTENSION IF NOT EXISTS pg_trgm')
        for column in TRIGRAM_COLUMNS:
            op.create_index(
                f'ix_jobs_{column}_trgm',
                'jobs',
                [column],
                postgresql_using='gin',
                postgresql_ops={column: 'gin_trgm_ops'},
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        for column in TRIGRAM_COLUMNS:
            op.drop_index(f'ix_jobs_{column}_trgm', table_name='jobs')
    with op.batch_alter_table('cluster_status', schema=None) as batch_op:
        batch_op.drop_column('partitions_at')
        batch_op.drop_column('partitions')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('environment')
        batch_op.drop_column('cpus_per_task')
        batch_op.drop_column('ntasks')
