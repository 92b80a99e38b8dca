"""Hand-written candidate pairs for choosing the equivalence threshold.

SAME: two wordings of one memory (should merge). RELATED: same topic, different claim (must
not merge: merging them would silently drop a distinct fact a reviewer needs to see).
"""

from __future__ import annotations

SAME: list[tuple[str, str]] = [
    ("The project uses pnpm, not npm.", "This repo uses pnpm instead of npm."),
    ("Use pnpm as the package manager.", "Package manager for this project is pnpm."),
    (
        "We chose Tauri over Electron for bundle size.",
        "Tauri was picked instead of Electron because of the smaller bundle.",
    ),
    ("User prefers concise answers.", "The user likes short, concise replies."),
    ("Run the integration tests with `make itest`.", "Integration tests are run via make itest."),
    ("The API server listens on port 8080.", "The API server runs on port 8080."),
    (
        "Always write commit messages in the imperative mood.",
        "Commit messages should use the imperative mood.",
    ),
    ("The staging database is PostgreSQL 16.", "Staging runs on PostgreSQL version 16."),
    (
        "Do not push directly to main; open a pull request.",
        "Never push straight to main, always go through a PR.",
    ),
    (
        "The frontend is built with React and Vite.",
        "React with Vite is used for the frontend build.",
    ),
    (
        "Deploys failed because the migration locked the orders table; run migrations off-peak.",
        "A migration locking the orders table broke the deploy, so migrations should run off-peak.",
    ),
    (
        "Tests live next to the code in __tests__ folders.",
        "Test files are placed beside the source in __tests__ directories.",
    ),
    (
        "The user wants type hints on every function.",
        "User prefers all functions to have type hints.",
    ),
    ("Prefer httpx over requests for HTTP calls.", "Use httpx rather than requests for HTTP."),
    (
        "Secrets are stored in Vault, never in .env files.",
        "Secrets go in Vault and must not be put in .env files.",
    ),
    ("Lint with ruff before committing.", "Run ruff to lint before every commit."),
    ("The mobile app targets iOS 16 and later.", "Minimum iOS version for the mobile app is 16."),
    (
        "We decided to use SQLite for local development.",
        "SQLite was chosen as the database for local dev.",
    ),
    ("Released version 2.3.0 on March 4.", "Version 2.3.0 was released on 4 March."),
    ("Use tabs for indentation in Go files.", "Go files are indented with tabs."),
    ("The user is based in Berlin and works in CET.", "User lives in Berlin, timezone CET."),
    ("CI runs on GitHub Actions.", "Continuous integration is done with GitHub Actions."),
    ("Prefer small pull requests under 400 lines.", "Keep PRs small, below 400 lines of change."),
    (
        "Error messages must be shown to users in German.",
        "User-facing error messages are in German.",
    ),
]

RELATED: list[tuple[str, str]] = [
    ("The project uses pnpm, not npm.", "The project uses yarn, not npm."),
    (
        "We chose Tauri over Electron for bundle size.",
        "We chose Electron over Tauri for plugin support.",
    ),
    ("The API server listens on port 8080.", "The metrics server listens on port 9090."),
    ("User prefers concise answers.", "User prefers detailed answers with examples."),
    ("The staging database is PostgreSQL 16.", "The production database is MySQL 8."),
    ("Run the integration tests with `make itest`.", "Run the unit tests with `make test`."),
    (
        "The frontend is built with React and Vite.",
        "The admin panel is built with Vue and Webpack.",
    ),
    ("Released version 2.3.0 on March 4.", "Released version 2.4.0 on April 12."),
    ("Use tabs for indentation in Go files.", "Use two spaces for indentation in YAML files."),
    ("Prefer httpx over requests for HTTP calls.", "Prefer aiohttp for websocket clients."),
    (
        "Secrets are stored in Vault, never in .env files.",
        "Feature flags are stored in LaunchDarkly.",
    ),
    ("Lint with ruff before committing.", "Format with black before committing."),
    ("The mobile app targets iOS 16 and later.", "The mobile app targets Android 12 and later."),
    (
        "Do not push directly to main; open a pull request.",
        "Squash commits when merging a pull request.",
    ),
    (
        "The user wants type hints on every function.",
        "The user wants docstrings on every public class.",
    ),
    ("CI runs on GitHub Actions.", "Nightly builds run on Jenkins."),
    (
        "Deploys failed because the migration locked the orders table; run migrations off-peak.",
        "Deploys failed because the Docker image was too large; prune build layers.",
    ),
    (
        "Tests live next to the code in __tests__ folders.",
        "Fixtures live in the tests/fixtures folder.",
    ),
    (
        "We decided to use SQLite for local development.",
        "We decided to use PostgreSQL in production.",
    ),
    (
        "The user is based in Berlin and works in CET.",
        "The team lead is based in New York and works in EST.",
    ),
    ("Prefer small pull requests under 400 lines.", "Prefer one reviewer per pull request."),
    (
        "Error messages must be shown to users in German.",
        "Log messages must be written in English.",
    ),
    ("Use pnpm as the package manager.", "Use pnpm workspaces for the monorepo packages."),
    (
        "The API uses JWT tokens that expire after 15 minutes.",
        "The API uses refresh tokens that expire after 30 days.",
    ),
]
