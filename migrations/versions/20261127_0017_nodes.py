"""Clusters keep their nodes and their partitions' access rules as the poller last read them.

Revision ID: 0017_nodes
Revises: 0015_announcements
Create Date: 2026-11-27 17:10:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0017_nodes'
down_revision: str | None = '0015_announcements'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('cluster_status') as batch:
        batch.add_column(sa.Column('nodes', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('node_partitions', sa.JSON(), nullable=True))
        batch.add_column(sa.Column('nodes_at', sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('cluster_status') as batch:
        batch.drop_column('nodes_at')
        batch.drop_column('node_partitions')
        batch.drop_column('nodes')
