"""Every GraphQL document the dashboard ships is valid against the committed schema.

The documents live in api/dashboard/js/queries.js as plain template strings (fragments are
interpolated with `${NAME}`); this test resolves them and validates each with graphql-core.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from graphql import build_schema, parse, validate

ROOT = Path(__file__).resolve().parents[2]
QUERIES_JS = ROOT / "api" / "dashboard" / "js" / "queries.js"
SDL = ROOT / "graph" / "schema.graphql"

_CONST = re.compile(r"^(export\s+)?const\s+([A-Z_]+)\s*=\s*`([^`]*)`;", re.M)


def shipped_documents() -> dict[str, str]:
    """name -> GraphQL document, for every exported const in queries.js."""
    source = QUERIES_JS.read_text(encoding="utf-8")
    raw: dict[str, tuple[bool, str]] = {
        m.group(2): (bool(m.group(1)), m.group(3)) for m in _CONST.finditer(source)
    }

    def resolve(text: str) -> str:
        return re.sub(r"\$\{([A-Z_]+)\}", lambda m: resolve(raw[m.group(1)][1]), text)

    return {name: resolve(text) for name, (exported, text) in raw.items() if exported}


def sdl_text() -> str:
    if SDL.exists():
        return SDL.read_text(encoding="utf-8")
    from memvet.graph.schema import print_sdl  # before graph/schema.graphql is committed

    return print_sdl()


DOCS = shipped_documents()


def test_queries_js_exports_documents() -> None:
    assert len(DOCS) >= 20, sorted(DOCS)
    assert "REVIEW_EVENTS" in DOCS and "APPROVE" in DOCS


@pytest.mark.parametrize("name", sorted(DOCS))
def test_document_is_valid_against_schema(name: str) -> None:
    schema = build_schema(sdl_text())
    errors = validate(schema, parse(DOCS[name]))
    assert not errors, f"{name}: " + "; ".join(e.message for e in errors)


def test_committed_sdl_matches_the_code_when_present() -> None:
    """The dashboard validates against schema.graphql; it must be the schema the server runs."""
    if not SDL.exists():
        return  # validated against the code's schema above
    from memvet.graph.schema import print_sdl

    assert SDL.read_text(encoding="utf-8") == print_sdl()
