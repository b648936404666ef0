"""Jobs keep the partition Slurm chose to run them in, beside the one asked for (which may
be none, for the cluster's default, or several): the job page shows where it ran. A
notification rule may name the browser as its channel: an open portal tab shows it.

Revision ID: 0014_partition_and_browser_rules
Revises: 0016_workflows
Create Date: 2026-11-27 17:10:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0014_partition_and_browser_rules'
down_revision: str | None = '0016_workflows'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_CHANNELS = "channel IN ('email', 'webhook')"
NEW_CHANNELS = "channel IN ('email', 'webhook', 'browser')"
OLD_WEBHOOK = "channel = 'email' OR (webhook_url IS NOT NULL AND secret IS NOT NULL)"
NEW_WEBHOOK = "channel != 'webhook' OR (webhook_url IS NOT NULL AND secret IS NOT NULL)"


def _channels(channels: str, webhook: str) -> None:
    rules = ('ck_notification_rules_channel', 'ck_notification_rules_webhook_has_url_and_secret')
    with op.batch_alter_table('notification_rules', schema=None) as batch_op:
        for name in rules:
            batch_op.drop_constraint(op.f(name), type_='check')
        batch_op.create_check_constraint(op.f(rules[0]), channels)
        batch_op.create_check_constraint(op.f(rules[1]), webhook)
    with op.batch_alter_table('notification_deliveries', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_notification_deliveries_channel'), type_='check')
        batch_op.create_check_constraint(op.f('ck_notification_deliveries_channel'), channels)


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('chosen_partition', sa.String(length=64), nullable=True))
    _channels(NEW_CHANNELS, NEW_WEBHOOK)


def downgrade() -> None:
    op.execute("DELETE FROM notification_rules WHERE channel = 'browser'")
    _channels(OLD_CHANNELS, OLD_WEBHOOK)
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('chosen_partition')
