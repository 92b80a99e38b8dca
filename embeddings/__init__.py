"""Embedding, the namespace-partitioned recall index, recall ranking and intake matching.

Implements the ports of `memory.ports` (Embedder, MemoryIndex, CandidateMatcher); imports
nothing of ours but `memory`. Heavy runtimes (torch, onnxruntime, chromadb) load lazily.

Recall, one concept a module: `index` (ChromaMemoryIndex, the MemoryIndex that composes the
rest), `partitions` (a namespace's collection and what is kept of it in memory), `mirror`
(small namespaces' vectors in memory, searched exactly), `search` (the strategy across
namespaces), `lexical` (tokeniser, BM25), `fusion` (dense + lexical scores), `chroma` (client,
collection names, HNSW settings, the model stamp).
"""
