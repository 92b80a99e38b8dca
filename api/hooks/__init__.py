"""Adapters for coding agents' own hook points (session start, after a turn, before compaction).

Hooks run inside the agent's loop, so they import only the stdlib and `api.client`, answer
within two seconds and never fail the agent: every problem becomes one line in a local log.
"""
