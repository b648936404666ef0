"""Job rows keep room on their page for their next version (PostgreSQL).

A job row is written many times while it is queued and running: its "still there" mark once
a minute, its elapsed time every cycle while it runs, its reason and forecast start. With
full pages each new version went to another page and into all ten of the table's indexes,
two of them trigram indexes: 100,000 marks took 3.8 s. With a fifth of each page kept free,
a version that changes no indexed column stays on its page and touches no index (a "HOT"
update): 1.8-2.1 s. Pages written before this keep no room until they are rewritten (as
``VACUUM FULL jobs`` does, in a maintenance window); rows move to roomier pages as they are
updated meanwhile.

Revision ID: 0024_jobs_fillfactor
Revises: 0023_desktop_viewed_at
Create Date: 2026-11-28 21:40:00

"""
from collections.abc import Sequence

from alembic import op


revision: str = '0024_jobs_fillfactor'
down_revision: str | None = '0023_desktop_viewed_at'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('ALTER TABLE jobs SET (fillfactor = 80)')


def downgrade() -> None:
    if op.get_bind().dialect.name == 'postgresql':
        op.execute('ALTER TABLE jobs RESET (fillfactor)')
