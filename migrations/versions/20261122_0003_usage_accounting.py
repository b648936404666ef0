"""Usage accounting: ingested accounting rows, daily rollups, ingest marks and limits.

Revision ID: 0003_usage
Revises: 0002
Create Date: 2026-11-22 04:32:10.589667

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0003_usage'
down_revision: str | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('accounting_jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('job_id', sa.String(length=64), nullable=False),
    sa.Column('array_job_id', sa.String(length=32), nullable=True),
    sa.Column('array_task_id', sa.String(length=64), nullable=True),
    sa.Column('name', sa.String(length=200), nullable=True),
    sa.Column('user_name', sa.String(length=64), nullable=True),
    sa.Column('account', sa.String(length=64), nullable=True),
    sa.Column('partition', sa.String(length=64), nullable=True),
    sa.Column('state', sa.String(length=32), nullable=False),
    sa.Column('native_state', sa.String(length=64), nullable=False),
    sa.Column('exit_code', sa.Integer(), nullable=True),
    sa.Column('signal', sa.Integer(), nullable=True),
    sa.Column('submit_time', sa.DateTime(timezone=True), nullable=False),
    sa.Column('start_time', sa.DateTime(timezone=True), nullable=True),
    sa.Column('end_time', sa.DateTime(timezone=True), nullable=True),
    sa.Column('elapsed_seconds', sa.BigInteger(), nullable=False),
    sa.Column('alloc_cpus', sa.Integer(), nullable=False),
    sa.Column('alloc_mem_mb', sa.BigInteger(), nullable=False),
    sa.Column('alloc_gpus', sa.Integer(), nullable=False),
    sa.Column('total_cpu_seconds', sa.Float(), nullable=True),
    sa.Column('max_rss_mb', sa.BigInteger(), nullable=True),
    sa.Column('req_mem_mb', sa.BigInteger(), nullable=True),
    sa.Column('time_limit_seconds', sa.BigInteger(), nullable=True),
    sa.Column('ingested_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_accounting_jobs')),
    sa.UniqueConstraint('cluster', 'job_id', 'submit_time', name=op.f('uq_accounting_jobs_cluster_job_id_submit_time'))
    )
    with op.batch_alter_table('accounting_jobs', schema=None) as batch_op:
        batch_op.create_index('ix_accounting_jobs_cluster_account_user', ['cluster', 'account', 'user_name'], unique=False)
        batch_op.create_index('ix_accounting_jobs_cluster_end_time', ['cluster', 'end_time'], unique=False)

    op.create_table('association_limits',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('account', sa.String(length=64), nullable=False),
    sa.Column('user_name', sa.String(length=64), nullable=False),
    sa.Column('tres', sa.String(length=32), nullable=False),
    sa.Column('minutes', sa.BigInteger(), nullable=False),
    sa.Column('fetched_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_association_limits')),
    sa.UniqueConstraint('cluster', 'account', 'user_name', 'tres', name=op.f('uq_association_limits_cluster_account_user_name_tres'))
    )
    op.create_table('usage_daily',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('account', sa.String(length=64), nullable=False),
    sa.Column('user_name', sa.String(length=64), nullable=False),
    sa.Column('partition', sa.String(length=64), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('cpu_seconds', sa.BigInteger(), nullable=False),
    sa.Column('gpu_seconds', sa.BigInteger(), nullable=False),
    sa.Column('mem_mb_seconds', sa.BigInteger(), nullable=False),
    sa.Column('total_cpu_seconds', sa.Float(), nullable=False),
    sa.Column('req_mem_mb_sum', sa.BigInteger(), nullable=False),
    sa.Column('max_rss_mb_sum', sa.BigInteger(), nullable=False),
    sa.Column('jobs_total', sa.Integer(), nullable=False),
    sa.Column('jobs_completed', sa.Integer(), nullable=False),
    sa.Column('jobs_failed', sa.Integer(), nullable=False),
    sa.Column('jobs_cancelled', sa.Integer(), nullable=False),
    sa.Column('jobs_timeout', sa.Integer(), nullable=False),
    sa.Column('jobs_other', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_usage_daily')),
    sa.UniqueConstraint('cluster', 'account', 'user_name', 'partition', 'day', name=op.f('uq_usage_daily_cluster_account_user_name_partition_day'))
    )
    with op.batch_alter_table('usage_daily', schema=None) as batch_op:
        batch_op.create_index('ix_usage_daily_day_account', ['day', 'account'], unique=False)

    op.create_table('usage_ingest_marks',
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('window_end', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_run_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('last_job_count', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('cluster', name=op.f('pk_usage_ingest_marks'))
    )


def downgrade() -> None:
    op.drop_table('usage_ingest_marks')
    with op.batch_alter_table('usage_daily', schema=None) as batch_op:
        batch_op.drop_index('ix_usage_daily_day_account')

    op.drop_table('usage_daily')
    op.drop_table('association_limits')
    with op.batch_alter_table('accounting_jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_accounting_jobs_cluster_end_time')
        batch_op.drop_index('ix_accounting_jobs_cluster_account_user')

    op.drop_table('accounting_jobs')
