"""Job dependencies, workflows, project allocations and allocation notifications.

Revision ID: 0016_workflows
Revises: 0017_nodes
Create Date: 2026-11-27 17:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa



revision: str = '0016_workflows'
down_revision: str | None = '0017_nodes'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_EVENTS = "event IN ('started', 'ended', 'failed')"
NEW_EVENTS = "event IN ('started', 'ended', 'failed', 'allocation')"


def _workflows() -> None:
    op.create_table(
        'workflows',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('owner_user_id', sa.Integer(), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('steps', sa.JSON(), nullable=False),
        sa.Column('is_shared', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_workflows_owner_user_id_users'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_workflows_project_id_projects'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_workflows')),
    )
    op.create_index('ix_workflows_project_id_id', 'workflows', ['project_id', 'id'])
    op.create_table(
        'workflow_runs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('workflow_id', sa.Integer(), nullable=False),
        sa.Column('owner_user_id', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_workflow_runs_owner_user_id_users'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['workflow_id'], ['workflows.id'], name=op.f('fk_workflow_runs_workflow_id_workflows'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_workflow_runs')),
    )
    op.create_index('ix_workflow_runs_workflow_id_id', 'workflow_runs', ['workflow_id', 'id'])
    op.create_table(
        'workflow_run_jobs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('run_id', sa.Integer(), nullable=False),
        sa.Column('step', sa.String(length=100), nullable=False),
        sa.Column('job_id', sa.Integer(), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_workflow_run_jobs_job_id_jobs'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['run_id'], ['workflow_runs.id'], name=op.f('fk_workflow_run_jobs_run_id_workflow_runs'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_workflow_run_jobs')),
    )
    op.create_index('ix_workflow_run_jobs_run_id', 'workflow_run_jobs', ['run_id'])


def _allocations() -> None:
    op.create_table(
        'project_allocations',
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('cpu_minutes', sa.BigInteger(), nullable=False),
        sa.Column('set_by_user_id', sa.Integer(), nullable=True),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_project_allocations_project_id_projects'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['set_by_user_id'], ['users.id'], name=op.f('fk_project_allocations_set_by_user_id_users'), ondelete='SET NULL'),
        sa.PrimaryKeyConstraint('project_id', name=op.f('pk_project_allocations')),
    )
    op.create_table(
        'allocation_alerts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('project_id', sa.Integer(), nullable=False),
        sa.Column('limit_minutes', sa.BigInteger(), nullable=False),
        sa.Column('threshold', sa.Integer(), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_allocation_alerts_project_id_projects'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_allocation_alerts')),
        sa.UniqueConstraint('project_id', 'limit_minutes', 'threshold', name=op.f('uq_allocation_alerts_project_id_limit_minutes_threshold')),
    )


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('dependency', sa.String(length=255), nullable=True))
    _workflows()
    _allocations()
    with op.batch_alter_table('notification_rules', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_notification_rules_event'), type_='check')
        batch_op.create_check_constraint(op.f('ck_notification_rules_event'), NEW_EVENTS)
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_notifications_event'), type_='check')
        batch_op.create_check_constraint(op.f('ck_notifications_event'), NEW_EVENTS)
        batch_op.alter_column('job_id', existing_type=sa.Integer(), nullable=True)
        batch_op.add_column(sa.Column('project_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('threshold', sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            op.f('fk_notifications_project_id_projects'), 'projects', ['project_id'], ['id'], ondelete='CASCADE'
        )


def downgrade() -> None:
    op.execute("DELETE FROM notifications WHERE event = 'allocation'")
    op.execute("DELETE FROM notification_rules WHERE event = 'allocation'")
    with op.batch_alter_table('notifications', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('fk_notifications_project_id_projects'), type_='foreignkey')
        batch_op.drop_column('threshold')
        batch_op.drop_column('project_id')
        batch_op.alter_column('job_id', existing_type=sa.Integer(), nullable=False)
        batch_op.drop_constraint(op.f('ck_notifications_event'), type_='check')
        batch_op.create_check_constraint(op.f('ck_notifications_event'), OLD_EVENTS)
    with op.batch_alter_table('notification_rules', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_notification_rules_event'), type_='check')
        batch_op.create_check_constraint(op.f('ck_notification_rules_event'), OLD_EVENTS)
    op.drop_table('allocation_alerts')
    op.drop_table('project_allocations')
    op.drop_index('ix_workflow_run_jobs_run_id', table_name='workflow_run_jobs')
    op.drop_table('workflow_run_jobs')
    op.drop_index('ix_workflow_runs_workflow_id_id', table_name='workflow_runs')
    op.drop_table('workflow_runs')
    op.drop_index('ix_workflows_project_id_id', table_name='workflows')
    op.drop_table('workflows')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('dependency')

