"""Job notifications: rules, the outbox written with each state change, delivery attempts.

Revision ID: 0011_notifications
Revises: 0010_interactive_sessions
Create Date: 2026-11-25 03:00:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0011_notifications'
down_revision: str | None = '0010_interactive_sessions'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EVENTS = "event IN ('started', 'ended', 'failed')"
CHANNELS = "channel IN ('email', 'webhook')"


def _rules() -> None:
    op.create_table(
        'notification_rules',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('event', sa.String(length=16), nullable=False),
        sa.Column('job_id', sa.Integer(), nullable=True),
        sa.Column('channel', sa.String(length=16), nullable=False),
        sa.Column('webhook_url', sa.String(length=2000), nullable=True),
        sa.Column('secret', sa.String(length=128), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(EVENTS, name=op.f('ck_notification_rules_event')),
        sa.CheckConstraint(CHANNELS, name=op.f('ck_notification_rules_channel')),
        sa.CheckConstraint(
            "channel = 'email' OR (webhook_url IS NOT NULL AND secret IS NOT NULL)",
            name=op.f('ck_notification_rules_webhook_has_url_and_secret'),
        ),
        sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_notification_rules_job_id_jobs'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_notification_rules_user_id_users'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_notification_rules')),
    )
    op.create_index('ix_notification_rules_user_id_id', 'notification_rules', ['user_id', 'id'], unique=False)
    op.create_index('ix_notification_rules_job_id', 'notification_rules', ['job_id'], unique=False)


def _outbox() -> None:
    op.create_table(
        'notifications',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('rule_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('job_id', sa.Integer(), nullable=False),
        sa.Column('event', sa.String(length=16), nullable=False),
        sa.Column('job_state', sa.String(length=32), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('claim_token', sa.String(length=36), nullable=True),
        sa.Column('claimed_until', sa.DateTime(timezone=True), nullable=True),
        sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(EVENTS, name=op.f('ck_notifications_event')),
        sa.CheckConstraint("status IN ('pending', 'sent', 'failed')", name=op.f('ck_notifications_status')),
        sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], name=op.f('fk_notifications_job_id_jobs'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['rule_id'], ['notification_rules.id'], name=op.f('fk_notifications_rule_id_notification_rules'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_notifications_user_id_users'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_notifications')),
        sa.UniqueConstraint('rule_id', 'job_id', 'event', name=op.f('uq_notifications_rule_id_job_id_event')),
    )
    op.create_index('ix_notifications_status_next_attempt_at', 'notifications', ['status', 'next_attempt_at'], unique=False)
    op.create_index('ix_notifications_user_id_id', 'notifications', ['user_id', 'id'], unique=False)


def _deliveries() -> None:
    op.create_table(
        'notification_deliveries',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('notification_id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('attempt', sa.Integer(), nullable=False),
        sa.Column('at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('channel', sa.String(length=16), nullable=False),
        sa.Column('is_success', sa.Boolean(), nullable=False),
        sa.Column('status_code', sa.Integer(), nullable=True),
        sa.Column('response', sa.String(length=500), nullable=True),
        sa.Column('error', sa.Text(), nullable=True),
        sa.CheckConstraint(CHANNELS, name=op.f('ck_notification_deliveries_channel')),
        sa.ForeignKeyConstraint(['notification_id'], ['notifications.id'], name=op.f('fk_notification_deliveries_notification_id_notifications'), ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_notification_deliveries_user_id_users'), ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_notification_deliveries')),
    )
    op.create_index('ix_notification_deliveries_user_id_id', 'notification_deliveries', ['user_id', 'id'], unique=False)
    op.create_index('ix_notification_deliveries_notification_id', 'notification_deliveries', ['notification_id'], unique=False)


def upgrade() -> None:
    _rules()
    _outbox()
    _deliveries()


def downgrade() -> None:
    op.drop_table('notification_deliveries')
    op.drop_table('notifications')
    op.drop_table('notification_rules')
