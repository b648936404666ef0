"""The Alembic history builds exactly the schema the models describe, on both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url

from app.db import alembic_config, include_for_dialect, migrate_to_head, sync_database_url
from app.models.catalogue import metadata
from tests.conftest import BACKENDS, postgres_test_url, recreate_postgres_database


@pytest.fixture(params=BACKENDS)
def blank_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database with no tables at all, separate from the shared test database."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'migrations.db'}"
    shared = make_url(postgres_test_url())
    url = shared.set(database=f"{shared.database}_migrations").render_as_string(False)
    recreate_postgres_database(url)
    return url


@pytest.fixture
def sync_engine(blank_db_url: str) -> Iterator[sa.Engine]:
    engine = sa.create_engine(sync_database_url(blank_db_url))
    yield engine
    engine.dispose()


def table_names(engine: sa.Engine) -> set[str]:
    return set(sa.inspect(engine).get_table_names())


def test_upgrade_head_creates_every_model_table(blank_db_url: str, sync_engine: sa.Engine) -> None:
    migrate_to_head(blank_db_url)

    assert table_names(sync_engine) == set(metadata.tables) | {"alembic_version"}


def test_upgrade_head_twice_is_a_no_op(blank_db_url: str, sync_engine: sa.Engine) -> None:
    migrate_to_head(blank_db_url)
    migrate_to_head(blank_db_url)

    with sync_engine.connect() as conn:
        revision = MigrationContext.configure(conn).get_current_revision()
    head = ScriptDirectory.from_config(alembic_config(blank_db_url)).get_current_head()
    assert revision == head


def test_downgrade_to_base_drops_every_table(blank_db_url: str, sync_engine: sa.Engine) -> None:
    migrate_to_head(blank_db_url)

    command.downgrade(alembic_config(blank_db_url), "base")

    assert table_names(sync_engine) == {"alembic_version"}


def test_upgrade_after_downgrade_restores_the_schema(
    blank_db_url: str, sync_engine: sa.Engine
) -> None:
    migrate_to_head(blank_db_url)
    command.downgrade(alembic_config(blank_db_url), "base")

    migrate_to_head(blank_db_url)

    assert table_names(sync_engine) == set(metadata.tables) | {"alembic_version"}


def test_migrations_match_the_models_without_drift(
    blank_db_url: str, sync_engine: sa.Engine
) -> None:
    migrate_to_head(blank_db_url)

    with sync_engine.connect() as conn:
        # Objects declared for another dialect only (ddl_if) are not expected here.
        include = include_for_dialect(conn.dialect.name)
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": include}
        )
        differences = compare_metadata(context, metadata)

    assert differences == []
