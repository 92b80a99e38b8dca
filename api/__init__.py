"""memvet's outer layer: settings, wiring, the Starlette app, the CLI and agent adapters."""
