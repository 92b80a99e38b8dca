"""The store: the tables and every query and write memvet makes; nothing else writes SQL.

SQLite (WAL) by default, PostgreSQL by URL; Alembic owns the schema (migrations/).

| module | owns |
|---|---|
| tables.py, engine.py, migrate.py | the schema, the engine, migrations |
| candidates.py | reading the queue, one candidate, its origins, counts |
| observations.py | intake's writes: a new candidate, or one more observation |
| review.py | review's writes: approve, reject, edit, memories, the archive sweep |
| memories.py | reading approved memories, the briefing |
| turns.py | stored turns |
| audit.py | the transition rows and their replay |
| outbox.py | what the recall index owes |
| tokens.py, settings.py | API tokens; run-time settings |
| transfer.py | export and import as JSON Lines |
"""
