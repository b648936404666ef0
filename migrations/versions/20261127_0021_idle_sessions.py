"""Interactive sessions remember their idleness (since when, last asked, warned, kept, ended
for it), and a notification rule may ask to be told when a session of its owner's is idle
and about to be ended.

Revision ID: 0021_idle_sessions
Revises: 0020_open_shells
Create Date: 2026-11-27 20:30:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0021_idle_sessions'
down_revision: str | None = '0020_open_shells'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_EVENTS = "event IN ('started', 'ended', 'failed', 'allocation')"
NEW_EVENTS = "event IN ('started', 'ended', 'failed', 'allocation', 'session_idle')"
COLUMNS = (
    'idle_since', 'idle_checked_at', 'idle_warned_at', 'idle_ends_at', 'kept_at', 'idle_ended_at'
)


def _events(events: str) -> None:
    for table in ('notification_rules', 'notifications'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(op.f(f'ck_{table}_event'), type_='check')
            batch_op.create_check_constraint(op.f(f'ck_{table}_event'), events)


def upgrade() -> None:
    with op.batch_alter_table('interactive_sessions', schema=None) as batch_op:
        for name in COLUMNS:
            batch_op.add_column(sa.Column(name, sa.DateTime(timezone=True), nullable=True))
    _events(NEW_EVENTS)


def downgrade() -> None:
    op.execute("DELETE FROM notifications WHERE event = 'session_idle'")
    op.execute("DELETE FROM notification_rules WHERE event = 'session_idle'")
    _events(OLD_EVENTS)
    with op.batch_alter_table('interactive_sessions', schema=None) as batch_op:
        for name in reversed(COLUMNS):
            batch_op.drop_column(name)
