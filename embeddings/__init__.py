"""Embedding, the namespace-partitioned recall index, recall ranking and intake matching.

Implements the ports of `memory.ports` (Embedder, MemoryIndex, CandidateMatcher); imports
nothing of ours but `memory`. Heavy runtimes (torch, onnxruntime, chromadb) load lazily.
"""
