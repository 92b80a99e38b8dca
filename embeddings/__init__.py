"""Embedding, the namespace-partitioned recall index, recall ranking and intake matching.

Implements the ports of `memory.ports` (Embedder, MemoryIndex, CandidateMatcher); imports
nothing of ours but `memory`. Heavy runtimes (torch, onnxruntime, chromadb) load lazily.

Recall, one concept a module: `index` (ChromaMemoryIndex, the MemoryIndex that composes the
rest), `partitions` (a namespace's collection and what is kept of it in memory), `mirror`
(small namespaces' vectors in memory, searched exactly), `pool` (all of them as one matrix, for
recall over many namespaces), `search` (the strategy across namespaces), `lexical` (tokeniser,
BM25), `fusion` (dense + lexical scores), `chroma` (client, collection names per model, HNSW
settings, the model stamp). Embedding: `model` (sentence-transformers: the packaged model or a
local one), `onnx` (the packaged model on onnxruntime), `vectors` (EmbeddingCache: each text
embedded once per model, shared by the index and `equivalence`, the intake matcher).
"""
