# clipbridge service image: slim Python, non-root; the README's install with every engine ([engines], see docs/install.md).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    CLIPBRIDGE_HOST=0.0.0.0 CLIPBRIDGE_PORT=8000
RUN useradd --create-home --uid 10001 clipbridge
WORKDIR /app
COPY pyproject.toml README.md ./
COPY app ./app
COPY schemas ./schemas
# torch==2.13.0 (the PyTorch dialect's engine) resolves from PyPI alone; on Linux x86-64 PyPI's build is the CUDA
# one (several GB), so the image names PyTorch's CPU index, an option that keeps it GBs smaller (docs/install.md):
# pip takes 2.13.0+cpu there, which satisfies the pin. Without the index the same command still installs.
RUN pip install -q --upgrade pip && \
    pip install -q --extra-index-url https://download.pytorch.org/whl/cpu -e ".[engines,fast]"
# The editable install leaves app/ without bytecode and PYTHONDONTWRITEBYTECODE keeps the runtime from writing any
# (nor could the non-root user): without this every sandbox worker, a fleet worker at each start and recycle
# included, compiled its ~150 app modules from source first (0.47 -> 0.34 s a worker start; docs/performance.md, Fleet).
RUN python -m compileall -q app
USER clipbridge
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
  CMD python -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2)" || exit 1
# clipbridge serve: uvicorn with app/clipbridge/server/serving.py's protocol (request-head timeout, minimum body rate); every
# CLIPBRIDGE_* setting is checked at start-up and a malformed one stops the container (exit 2).
CMD ["clipbridge", "serve"]
