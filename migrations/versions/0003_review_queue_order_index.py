"""review queue order: an index on extractions (created_at, id) for keyset neighbour lookups

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 23:40:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("extractions", schema=None) as batch_op:
        batch_op.create_index("ix_extractions_created_at_id", ["created_at", "id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("extractions", schema=None) as batch_op:
        batch_op.drop_index("ix_extractions_created_at_id")
