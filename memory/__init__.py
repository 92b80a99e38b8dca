"""memvet's domain core: it imports nothing of the other packages (no Starlette, Strawberry,
MCP, Chroma or torch).

| module | owns |
|---|---|
| kinds.py, namespaces.py | the six kinds and their recall weights; `persona:` / `workspace:` |
| errors.py | the error tree, one stable code each |
| access.py | roles, principals, token format and the bearer-header parser |
| records.py | the plain dataclasses the core hands out |
| ports.py | the Protocols others implement (Embedder, MemoryIndex, Extractor, EventBus) |
| limits.py, text.py, messages.py, proposals.py | bounds and the checks input passes |
| policy.py | the auto-approve rule |
| events.py | the event bus (in-process, or PostgreSQL NOTIFY across workers) |
| clock.py | time, always aware UTC |
| service/ | MemoryService and its command groups (see service/__init__.py) |
| store/ | tables and queries: the only SQL (see store/__init__.py) |
"""
