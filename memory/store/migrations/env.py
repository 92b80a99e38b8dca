"""Alembic environment: runs on the connection memory.migrate hands it."""

from __future__ import annotations

from alembic import context

from memvet.memory.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # `alembic` CLI use: build an engine from the ini URL
    from memvet.memory.store.engine import make_engine

    engine = make_engine(context.config.get_main_option("sqlalchemy.url") or "")
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
