"""The GraphQL schema over MemoryService (Strawberry): types, queries, mutations, subscriptions."""
