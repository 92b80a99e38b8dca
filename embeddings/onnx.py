"""The fast path: the packaged model exported once to ONNX and run with onnxruntime.

The export (torch + the `onnx` package) happens at most once per model hash and cache dir,
under a file lock; afterwards only onnxruntime and `tokenizers` are needed. fp32 ONNX gives
the same vectors as sentence-transformers (cosine 1.0000), so it shares the model id and can
read and write the same collections. int8 dynamic quantisation is faster still but moves the
vectors (cosine ~0.975 to fp32), so it gets its own model id and collections of its own.

The exported graph takes texts side by side in a row: each token carries its position within
its own text and the index of its text in the row (its segment), and attends only to its own
segment, so each text gets exactly the vector it would get alone. A turn's handful of short
statements then costs one run of their tokens (no padding, one pass over the weights) rather
than several padded runs (`plan`).
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memvet.embeddings.model import (
    DIMENSION,
    MAX_SEQ_LENGTH,
    MODEL_ID,
    SentenceTransformerEmbedder,
    cut_to_tokens,
    model_hash,
    packaged_model_path,
)

log = logging.getLogger(__name__)
_INPUTS = ("input_ids", "position_ids", "segments")
# What one session run costs beyond its tokens, in tokens: every run streams all the weights
# (42 MB fp32) through the cache, ~3.3 ms on the 2-core benchmark machine, where a token costs
# ~0.35 ms (2 threads). Used to weigh one more run against the padding it saves.
RUN_COST_TOKENS = 9
# The widest row texts are packed into, and what attention adds to a token's cost in a row of
# w tokens: a factor 1 + w / ATTENTION_TOKENS. On the 2-core machine a token cost 0.38 ms in
# a row of 64, 0.37 in one of 128, 0.41 in one of 256 and 0.46 in one of 512; packing 2,000
# sentences into rows of 128 embedded them 10 % slower than length-sorted runs, whose
# padding is slight. So texts are packed only where that costs less (`plan`): a few short ones.
PACK_TOKENS = 128
ATTENTION_TOKENS = 1600


def export_onnx(cache_dir: Path, *, model_path: Path | None = None, quantize: bool = False) -> Path:
    """Path of the ONNX encoder for the model, exporting (and quantising) it if not cached.
    An export replaces the model's older one (a graph of one text a row, before packing)."""
    from filelock import FileLock

    root = model_path or packaged_model_path()
    key = model_hash(root)[:16]
    cache_dir.mkdir(parents=True, exist_ok=True)
    fp32 = cache_dir / f"minilm-{key}-packed-fp32.onnx"
    target = cache_dir / f"minilm-{key}-packed-int8.onnx" if quantize else fp32
    if target.is_file():
        return target
    with FileLock(str(cache_dir / f"minilm-{key}.lock")):
        if not fp32.is_file():
            _export_fp32(root, fp32)
            for name in (f"minilm-{key}-fp32.onnx", f"minilm-{key}-int8.onnx"):
                (cache_dir / name).unlink(missing_ok=True)
        if quantize and not target.is_file():
            from onnxruntime.quantization import QuantType, quantize_dynamic

            tmp = target.with_suffix(".tmp.onnx")
            quantize_dynamic(str(fp32), str(tmp), weight_type=QuantType.QInt8)
            os.replace(tmp, target)
    return target


def _export_fp32(model_path: Path, target: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_path), local_files_only=True)
    model.eval()

    class _PackedEncoder(torch.nn.Module):
        """Rows of texts side by side: a token attends to the tokens of its own segment."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, position_ids: Any, segments: Any) -> Any:
            same = segments[:, :, None] == segments[:, None, :]
            mask = torch.where(same, 0.0, torch.finfo(torch.float32).min)[:, None]
            out = self.inner(input_ids=input_ids, attention_mask=mask,
                             token_type_ids=torch.zeros_like(input_ids),
                             position_ids=position_ids)
            return out.last_hidden_state

    dummy = torch.ones((2, 8), dtype=torch.long)
    positions = torch.arange(8).repeat(2, 1)
    tmp = target.with_suffix(".tmp.onnx")
    axes = {name: {0: "batch", 1: "seq"} for name in (*_INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # tracer chatter about shapes; the graph is checked by tests
        torch.onnx.export(
            _PackedEncoder(model),
            (dummy, positions, torch.zeros_like(dummy)),
            str(tmp),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, target)


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: ~3 ms a query on 2 cores vs ~13 ms for torch."""

    dimension = DIMENSION

    def __init__(
        self,
        *,
        cache_dir: Path,
        model_path: Path | None = None,
        quantize: bool = False,
        threads: int | None = None,
        batch_size: int = 32,
        bulk_threads: int | None = None,
        bulk_min: int = 256,
    ) -> None:
        self.cache_dir = cache_dir
        self.model_path = model_path
        self.quantize = quantize
        self.threads = threads or min(4, os.cpu_count() or 1)
        # Bulk work (import, reindex, a big approval) runs on a session of its own with half
        # the cores a call: the core embeds two batches at once (memory/service/indexing.py),
        # each call on its own threads. On the 2-core benchmark machine one thread embedded
        # 401 texts/s against 355/s on two (a session's threads wait for each other when the
        # machine is busy); two single-threaded calls at once do not wait for each other.
        self.bulk_threads = bulk_threads or max(1, min(4, (os.cpu_count() or 1) // 2))
        self.bulk_min = bulk_min
        self.batch_size = batch_size
        self.model_id = MODEL_ID + ("#onnx-int8" if quantize else "")
        self._session: Any = None
        self._bulk: Any = None
        self._path: Path | None = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def load(self) -> None:
        """Export if needed and open the session (done lazily by the first embed call)."""
        if self._session is not None:
            return
        with self._lock:
            if self._session is not None:
                return
            from tokenizers import Tokenizer

            root = self.model_path or packaged_model_path()
            path = export_onnx(self.cache_dir, model_path=root, quantize=self.quantize)
            tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(MAX_SEQ_LENGTH)
            self._tokenizer = tokenizer
            self._path = path
            self._session = _session(path, self.threads)

    def _bulk_session(self) -> Any:
        if self.bulk_threads == self.threads:
            return self._session
        if self._bulk is None:
            with self._lock:
                if self._bulk is None:
                    assert self._path is not None  # load() ran
                    self._bulk = _session(self._path, self.bulk_threads)
        return self._bulk

    def truncate(self, texts: Sequence[str], max_tokens: int) -> list[str]:
        """TruncatingEmbedder.truncate, with the model's tokenizer."""
        if not texts:
            return []
        self.load()
        return [cut_to_tokens(text, e.offsets, e.word_ids, max_tokens)
                for text, e in zip(texts, self._tokenizer.encode_batch(list(texts)), strict=True)]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length, mean-pooled vectors; texts are run in length-sorted batches (`batches`)."""
        return self.embed_array(texts).tolist()  # type: ignore[no-any-return]

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """`embed` as a float32 array (no round trip through Python floats)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self.load()
        session = self._bulk_session() if len(texts) >= self.bulk_min else self._session
        encodings = self._tokenizer.encode_batch(list(texts))
        result = np.zeros((len(encodings), self.dimension), dtype=np.float32)
        for run in plan([len(e.ids) for e in encodings], self.batch_size):
            order = [i for row in run for i in row]
            feeds, tokens, starts = _feeds([[encodings[i].ids for i in row] for row in run])
            hidden = session.run(None, feeds)[0]
            # each text's tokens lie together in the flattened rows: mean-pool them
            flat = hidden.reshape(-1, hidden.shape[-1])[tokens]
            counts = np.diff(np.append(starts, len(tokens))).astype(np.float32)
            pooled = np.add.reduceat(flat, starts, axis=0) / counts[:, None]
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            result[order] = pooled / np.clip(norms, 1e-12, None)
        return result


def _feeds(rows: list[list[list[int]]]) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Session inputs for rows of token id lists, with where each text's tokens land in the
    flattened output (`tokens`: their flat indices, text after text; `starts`: where each
    text begins in `tokens`). Padding is segment -1 and attends only to itself."""
    width = max(sum(len(ids) for ids in row) for row in rows)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    positions = np.zeros_like(ids)
    segments = np.full_like(ids, -1)
    tokens: list[np.ndarray] = []
    starts: list[int] = []
    count = 0
    for r, row in enumerate(rows):
        at = 0
        for segment, text in enumerate(row):
            n = len(text)
            ids[r, at : at + n] = text
            positions[r, at : at + n] = np.arange(n)
            segments[r, at : at + n] = segment
            tokens.append(np.arange(r * width + at, r * width + at + n))
            starts.append(count)
            count += n
            at += n
    feeds = {"input_ids": ids, "position_ids": positions, "segments": segments}
    return feeds, np.concatenate(tokens), np.asarray(starts)


def plan(lengths: Sequence[int], most: int, width: int = PACK_TOKENS,
         run_cost: int = RUN_COST_TOKENS) -> list[list[list[int]]]:
    """Session runs for texts of these token counts: each run a list of rows, each row the
    indices of the texts side by side in it. Of two plans, the one the cost model (`cost`)
    prices lower: a text a row, the rows in runs as `batches` plans them; or the texts packed
    into rows of up to `width` tokens (a row starts with the longest text left and takes the
    shortest ones left while they fit; a longer text has a row of its own), the rows in runs
    the same way. A turn's five statements of 60 tokens in all are one run of one row; a
    bulk import's sentences go a text a row, in runs of about one length."""
    alone = [[[i] for i in run] for run in batches(lengths, most, run_cost)]
    if len(lengths) < 2:
        return alone
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    rows: list[list[int]] = []
    lo, hi = 0, len(order) - 1
    while lo <= hi:
        row = [order[hi]]
        room = width - lengths[order[hi]]
        hi -= 1
        while lo <= hi and lengths[order[lo]] <= room:
            row.append(order[lo])
            room -= lengths[order[lo]]
            lo += 1
        rows.append(row)
    totals = [sum(lengths[i] for i in row) for row in rows]
    packed = [[rows[r] for r in run] for run in batches(totals, most, run_cost)]
    return min((alone, packed), key=lambda runs: cost(lengths, runs, run_cost))


def cost(lengths: Sequence[int], runs: list[list[list[int]]],
         run_cost: int = RUN_COST_TOKENS) -> float:
    """What a plan costs, in tokens: a run costs `run_cost` plus its rows times its width,
    each token dearer by the attention over a row that wide."""
    total = 0.0
    for run in runs:
        width = max(sum(lengths[i] for i in row) for row in run)
        total += run_cost + len(run) * width * (1 + width / ATTENTION_TOKENS)
    return total


def batches(lengths: Sequence[int], most: int, run_cost: int = RUN_COST_TOKENS
            ) -> list[list[int]]:
    """Indices of rows (by token count) grouped into runs of at most `most`, padding included
    as cheaply as the cost model allows: a run costs `run_cost` tokens plus its width times its
    rows. Rows are sorted by length and cut where a new run costs less than the padding it
    saves (an exact partition of the sorted lengths, dynamic programming bounded by `most`):
    rows of 13, 13, 14 and 35 tokens go as two runs (3 x 14, then 35), not one of 4 x 35."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    n = len(order)
    best = [0.0] + [float("inf")] * n  # best[j]: cheapest plan for the first j sorted rows
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        width = lengths[order[j - 1]]
        for i in range(max(0, j - most), j):
            cost = best[i] + run_cost + (j - i) * width
            if cost < best[j]:
                best[j], cut[j] = cost, i
    runs: list[list[int]] = []
    j = n
    while j > 0:
        runs.append(order[cut[j] : j])
        j = cut[j]
    return runs[::-1]


def _session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # no busy-waiting between ops: on a shared box spinning threads steal the CPU the
    # others need (measured: 2 threads p50 18 ms spinning vs 7 ms not, under load)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def make_embedder(
    cache_dir: Path, *, prefer_onnx: bool = True, quantize: bool = False
) -> OnnxEmbedder | SentenceTransformerEmbedder:
    """The fastest working embedder: ONNX when it can be exported/loaded, else torch."""
    if prefer_onnx:
        embedder = OnnxEmbedder(cache_dir=cache_dir, quantize=quantize)
        try:
            embedder.load()
            return embedder
        except Exception as exc:  # the `onnx` exporter package missing, say
            log.warning(
                "ONNX embedder unavailable (%s); falling back to sentence-transformers", exc
            )
    return SentenceTransformerEmbedder()
