"""Every bound the core puts on what callers hand it, in one place.

Interfaces describe these in their own words (GraphQL field descriptions, CLI help) but take
the numbers from here, so a bound never differs between doors.
"""

from __future__ import annotations

MAX_CONTENT_BYTES = 16 * 1024  # one candidate or memory, UTF-8
MAX_EXCERPT_CHARS = 4000  # the passage an origin keeps
MAX_ID_CHARS = 200  # ids, names, conversation and turn ids
MAX_REASON_CHARS = 2000
MAX_QUERY_CHARS = 2000  # a recall query
MAX_RECALL_LIMIT = 100
MAX_PAGE = 500  # one page of a list
MAX_OFFSET = 1_000_000_000  # far past any real queue; keeps the SQL integer in range
MAX_BULK = 200  # ids in one bulk approve or reject

# Messages handed in for extraction (a turn, or a stretch about to be compacted).
MAX_MESSAGE_BYTES = 64 * 1024
MAX_MESSAGES = 10_000
MAX_TOTAL_BYTES = 4 * 1024 * 1024

MAX_ARCHIVE_DAYS = 3650
MAX_EXTRACTION_BACKLOG = 1000
