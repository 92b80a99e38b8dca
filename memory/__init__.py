"""memvet's domain core: kinds, namespaces, the store, intake, review and the service facade.

Nothing here imports Starlette, Strawberry, MCP, Chroma or torch.
"""
