"""Jobs keep the nodes they run on, as Slurm names them: the job page shows them and an
interactive app is reached on its job's node.

Revision ID: 0009_node_list
Revises: 0008_slurm_raw_id
Create Date: 2026-11-24 23:45:00

"""
from collections.abc import Sequence

from alembic import op
import sqlalchemy as sa


revision: str = '0009_node_list'
down_revision: str | None = '0008_slurm_raw_id'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('node_list', sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('node_list')
