"""Alembic owns the schema: an upgrade builds exactly `tables.metadata` and keeps the data."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, select
from sqlalchemy.engine import Engine

from memvet.memory.records import CandidateInput, Source
from memvet.memory.service import MemoryService
from memvet.memory.store import migrate, tables
from memvet.memory.store.engine import make_engine
from tests.memory.support import AGENT, REVIEWER, FakeClock, dump


def test_upgrade_builds_the_metadata(engine: Engine) -> None:
    with engine.connect() as conn:
        ctx = MigrationContext.configure(conn, opts={"compare_type": True,
                                                     "compare_server_default": True})
        assert compare_metadata(ctx, tables.metadata) == []
    assert migrate.current_revision(engine) == migrate.head_revision()


def test_upgrade_twice_is_a_no_op(engine: Engine, clock: FakeClock) -> None:
    svc = MemoryService(engine=engine, clock=clock)
    c = svc.submit(CandidateInput("use pnpm", "fact", "workspace:shop", Source.EXPLICIT, 0.5),
                   AGENT).candidate
    svc.approve(c.id, REVIEWER)
    before = dump(engine)
    migrate.upgrade(engine)
    assert dump(engine) == before
    svc.close()


def test_a_later_migration_keeps_existing_rows(engine_url: str, tmp_path: Path,
                                               clock: FakeClock) -> None:
    """Build the schema at today's head, fill it, then apply a (test-only) next revision."""
    engine = make_engine(engine_url)
    migrate.upgrade(engine)
    svc = MemoryService(engine=engine, clock=clock)
    for i in range(5):
        c = svc.submit(CandidateInput(f"fact {i}", "fact", "workspace:shop", Source.EXPLICIT,
                                      0.5), AGENT).candidate
        if i % 2:
            svc.approve(c.id, REVIEWER)
    svc.create_token("agent", REVIEWER.__class__.system())
    svc.close()
    before = dump(engine)

    scripts = tmp_path / "migrations"
    shutil.copytree(migrate.MIGRATIONS, scripts,
                    ignore=shutil.ignore_patterns("__pycache__"))
    head = migrate.head_revision()
    (scripts / "versions" / "9999_test_next.py").write_text(textwrap.dedent(f'''
        import sqlalchemy as sa
        from alembic import op

        revision = "9999"
        down_revision = "{head}"
        branch_labels = None
        depends_on = None

        def upgrade():
            with op.batch_alter_table("candidates") as batch:
                batch.add_column(sa.Column("note", sa.Text(), nullable=True))

        def downgrade():
            with op.batch_alter_table("candidates") as batch:
                batch.drop_column("note")
    '''))
    cfg = Config()
    cfg.set_main_option("script_location", str(scripts))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    assert migrate.current_revision(engine) == "9999"
    assert "note" in {c["name"] for c in inspect(engine).get_columns("candidates")}
    # every row of every table survived, column for column
    with engine.connect() as conn:
        for table in tables.metadata.sorted_tables:
            rows = conn.execute(select(*table.columns)).all()
            assert sorted((tuple(r) for r in rows), key=repr) == before[table.name], table.name
    engine.dispose()
