"""Initial schema: users, projects, templates, jobs, tokens, audit and poller state.

Revision ID: 0001
Revises:
Create Date: 2026-11-22 04:23:11.490891

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('cluster_status',
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('last_contact_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('consecutive_failures', sa.Integer(), nullable=False),
    sa.Column('calls_last_cycle', sa.Integer(), nullable=False),
    sa.Column('cycle_seconds', sa.Double(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('cluster', name=op.f('pk_cluster_status'))
    )
    op.create_table('poller_leases',
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('holder', sa.String(length=128), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('cluster', name=op.f('pk_poller_leases'))
    )
    op.create_table('projects',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('slurm_account', sa.String(length=64), nullable=False),
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('is_active', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_projects')),
    sa.UniqueConstraint('cluster', 'slurm_account', name=op.f('uq_projects_cluster_slurm_account'))
    )
    op.create_table('users',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('login', sa.String(length=64), nullable=False),
    sa.Column('display_name', sa.String(length=200), nullable=False),
    sa.Column('email', sa.String(length=320), nullable=True),
    sa.Column('password_hash', sa.String(length=255), nullable=True),
    sa.Column('is_site_admin', sa.Boolean(), nullable=False),
    sa.Column('is_active', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users')),
    sa.UniqueConstraint('login', name=op.f('uq_users_login'))
    )
    op.create_table('api_tokens',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('token_prefix', sa.String(length=16), nullable=False),
    sa.Column('token_hash', sa.String(length=128), nullable=False),
    sa.Column('scopes', sa.JSON(), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_used_ip', sa.String(length=45), nullable=True),
    sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_api_tokens_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_api_tokens')),
    sa.UniqueConstraint('token_hash', name=op.f('uq_api_tokens_token_hash'))
    )
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_tokens_user_id'), ['user_id'], unique=False)

    op.create_table('audit_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('actor_user_id', sa.Integer(), nullable=True),
    sa.Column('surface', sa.String(length=16), nullable=False),
    sa.Column('action', sa.String(length=64), nullable=False),
    sa.Column('target_type', sa.String(length=64), nullable=True),
    sa.Column('target_id', sa.String(length=64), nullable=True),
    sa.Column('address', sa.String(length=45), nullable=True),
    sa.Column('details', sa.JSON(), nullable=False),
    sa.CheckConstraint("surface IN ('web', 'api', 'cli', 'poller', 'system')", name=op.f('ck_audit_events_surface')),
    sa.ForeignKeyConstraint(['actor_user_id'], ['users.id'], name=op.f('fk_audit_events_actor_user_id_users'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_audit_events'))
    )
    with op.batch_alter_table('audit_events', schema=None) as batch_op:
        batch_op.create_index('ix_audit_events_actor_user_id_id', ['actor_user_id', 'id'], unique=False)
        batch_op.create_index(batch_op.f('ix_audit_events_at'), ['at'], unique=False)
        batch_op.create_index('ix_audit_events_target_type_target_id', ['target_type', 'target_id'], unique=False)

    op.create_table('job_templates',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('description', sa.Text(), nullable=False),
    sa.Column('scope', sa.String(length=16), nullable=False),
    sa.Column('owner_user_id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=True),
    sa.Column('current_version_id', sa.Integer(), nullable=True),
    sa.Column('is_archived', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("scope <> 'project' OR project_id IS NOT NULL", name=op.f('ck_job_templates_project_scope_has_project')),
    sa.CheckConstraint("scope IN ('personal', 'project', 'site')", name=op.f('ck_job_templates_scope')),
    sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_job_templates_owner_user_id_users')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_job_templates_project_id_projects'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_job_templates'))
    )
    with op.batch_alter_table('job_templates', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_job_templates_owner_user_id'), ['owner_user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_job_templates_project_id'), ['project_id'], unique=False)

    op.create_table('memberships',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.CheckConstraint("role IN ('member', 'manager')", name=op.f('ck_memberships_role')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_memberships_project_id_projects'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memberships_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memberships')),
    sa.UniqueConstraint('user_id', 'project_id', name=op.f('uq_memberships_user_id_project_id'))
    )
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_memberships_project_id'), ['project_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_memberships_user_id'), ['user_id'], unique=False)

    op.create_table('user_cluster_accounts',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('username', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_user_cluster_accounts_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_user_cluster_accounts')),
    sa.UniqueConstraint('cluster', 'username', name=op.f('uq_user_cluster_accounts_cluster_username')),
    sa.UniqueConstraint('user_id', 'cluster', name=op.f('uq_user_cluster_accounts_user_id_cluster'))
    )
    op.create_table('template_versions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('template_id', sa.Integer(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('script', sa.Text(), nullable=False),
    sa.Column('parameter_schema', sa.JSON(), nullable=False),
    sa.Column('defaults', sa.JSON(), nullable=False),
    sa.Column('created_by_user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('change_note', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['created_by_user_id'], ['users.id'], name=op.f('fk_template_versions_created_by_user_id_users')),
    sa.ForeignKeyConstraint(['template_id'], ['job_templates.id'], name=op.f('fk_template_versions_template_id_job_templates'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_template_versions')),
    sa.UniqueConstraint('template_id', 'version', name=op.f('uq_template_versions_template_id_version'))
    )
    # job_templates and template_versions reference each other: add this key once both exist.
    with op.batch_alter_table('job_templates', schema=None) as batch_op:
        batch_op.create_foreign_key(
            batch_op.f('fk_job_templates_current_version_id_template_versions'),
            'template_versions', ['current_version_id'], ['id'], ondelete='SET NULL',
        )

    op.create_table('jobs',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('owner_user_id', sa.Integer(), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('cluster', sa.String(length=64), nullable=False),
    sa.Column('template_version_id', sa.Integer(), nullable=True),
    sa.Column('parameters', sa.JSON(), nullable=False),
    sa.Column('script', sa.Text(), nullable=False),
    sa.Column('idempotency_key', sa.String(length=128), nullable=True),
    sa.Column('slurm_job_id', sa.String(length=32), nullable=True),
    sa.Column('array_parent_id', sa.Integer(), nullable=True),
    sa.Column('array_task_id', sa.Integer(), nullable=True),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('state', sa.String(length=32), nullable=False),
    sa.Column('native_state', sa.String(length=64), nullable=True),
    sa.Column('reason', sa.String(length=255), nullable=True),
    sa.Column('exit_code', sa.Integer(), nullable=True),
    sa.Column('exit_signal', sa.Integer(), nullable=True),
    sa.Column('submitted_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('ended_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_seen_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('partition', sa.String(length=64), nullable=True),
    sa.Column('qos', sa.String(length=64), nullable=True),
    sa.Column('time_limit_minutes', sa.Integer(), nullable=True),
    sa.Column('cpus', sa.Integer(), nullable=True),
    sa.Column('memory_mb', sa.Integer(), nullable=True),
    sa.Column('gpus', sa.Integer(), nullable=True),
    sa.Column('gpu_type', sa.String(length=64), nullable=True),
    sa.Column('nodes', sa.Integer(), nullable=True),
    sa.Column('array_spec', sa.String(length=255), nullable=True),
    sa.Column('elapsed_seconds', sa.Integer(), nullable=True),
    sa.Column('total_cpu_seconds', sa.Integer(), nullable=True),
    sa.Column('max_rss_bytes', sa.BigInteger(), nullable=True),
    sa.Column('alloc_cpus', sa.Integer(), nullable=True),
    sa.Column('alloc_mem_mb', sa.Integer(), nullable=True),
    sa.Column('alloc_gpus', sa.Integer(), nullable=True),
    sa.Column('work_dir', sa.String(length=1024), nullable=True),
    sa.Column('stdout_path', sa.String(length=1024), nullable=True),
    sa.Column('stderr_path', sa.String(length=1024), nullable=True),
    sa.Column('submit_error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("state IN ('submitting', 'submit_failed', 'pending', 'held', 'running', 'suspended', 'completing', 'completed', 'failed', 'cancelled', 'timeout', 'out_of_memory', 'node_fail', 'preempted', 'boot_fail', 'deadline', 'undetermined')", name=op.f('ck_jobs_state')),
    sa.ForeignKeyConstraint(['array_parent_id'], ['jobs.id'], name=op.f('fk_jobs_array_parent_id_jobs'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['owner_user_id'], ['users.id'], name=op.f('fk_jobs_owner_user_id_users')),
    sa.ForeignKeyConstraint(['project_id'], ['projects.id'], name=op.f('fk_jobs_project_id_projects')),
    sa.ForeignKeyConstraint(['template_version_id'], ['template_versions.id'], name=op.f('fk_jobs_template_version_id_template_versions'), ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_jobs')),
    sa.UniqueConstraint('owner_user_id', 'idempotency_key', name=op.f('uq_jobs_owner_user_id_idempotency_key')),
    sa.UniqueConstraint('uuid', name=op.f('uq_jobs_uuid'))
    )
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.create_index('ix_jobs_array_parent_id', ['array_parent_id'], unique=False)
        batch_op.create_index('ix_jobs_cluster_slurm_job_id', ['cluster', 'slurm_job_id'], unique=False)
        batch_op.create_index('ix_jobs_cluster_state', ['cluster', 'state'], unique=False)
        batch_op.create_index('ix_jobs_owner_user_id_id', ['owner_user_id', 'id'], unique=False)
        batch_op.create_index('ix_jobs_project_id_id', ['project_id', 'id'], unique=False)

    op.create_table('job_events',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.Integer(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('from_state', sa.String(length=32), nullable=True),
    sa.Column('to_state', sa.String(length=32), nullable=False),
    sa.Column('reason', sa.String(length=255), nullable=True),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.CheckConstraint("source IN ('submit', 'poller', 'user', 'system')", name=op.f('ck_job_events_source')),
    sa.CheckConstraint("to_state IN ('submitting', 'submit_failed', 'pending', 'held', 'running', 'suspended', 'completing', 'completed', 'failed', 'cancelled', 'timeout', 'out_of_memory', 'node_fail', 'preempted', 'boot_fail', 'deadline', 'undetermined')", name=op.f('ck_job_events_to_state')),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_job_events_job_id_jobs'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_job_events'))
    )
    with op.batch_alter_table('job_events', schema=None) as batch_op:
        batch_op.create_index('ix_job_events_job_id_id', ['job_id', 'id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('job_events', schema=None) as batch_op:
        batch_op.drop_index('ix_job_events_job_id_id')

    op.drop_table('job_events')
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_index('ix_jobs_project_id_id')
        batch_op.drop_index('ix_jobs_owner_user_id_id')
        batch_op.drop_index('ix_jobs_cluster_state')
        batch_op.drop_index('ix_jobs_cluster_slurm_job_id')
        batch_op.drop_index('ix_jobs_array_parent_id')

    op.drop_table('jobs')
    with op.batch_alter_table('job_templates', schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f('fk_job_templates_current_version_id_template_versions'), type_='foreignkey'
        )

    op.drop_table('template_versions')
    op.drop_table('user_cluster_accounts')
    with op.batch_alter_table('memberships', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_memberships_user_id'))
        batch_op.drop_index(batch_op.f('ix_memberships_project_id'))

    op.drop_table('memberships')
    with op.batch_alter_table('job_templates', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_job_templates_project_id'))
        batch_op.drop_index(batch_op.f('ix_job_templates_owner_user_id'))

    op.drop_table('job_templates')
    with op.batch_alter_table('audit_events', schema=None) as batch_op:
        batch_op.drop_index('ix_audit_events_target_type_target_id')
        batch_op.drop_index(batch_op.f('ix_audit_events_at'))
        batch_op.drop_index('ix_audit_events_actor_user_id_id')

    op.drop_table('audit_events')
    with op.batch_alter_table('api_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_tokens_user_id'))

    op.drop_table('api_tokens')
    op.drop_table('users')
    op.drop_table('projects')
    op.drop_table('poller_leases')
    op.drop_table('cluster_status')
