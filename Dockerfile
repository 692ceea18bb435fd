# Foldwise API and worker image. The same image runs `foldwise serve` and `foldwise worker`.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    FOLDWISE_DATA_DIR=/data

WORKDIR /build

# OCR of scanned documents: Tesseract with English and German (docs/ocr.md). Another
# language: add its tesseract-ocr-<code> package and FOLDWISE_OCR_LANGUAGES.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu \
    && rm -rf /var/lib/apt/lists/*

# Dependencies first, so that code changes do not reinstall them.
COPY pyproject.toml README.md setup.py ./
COPY backend/foldwise/__init__.py backend/foldwise/__init__.py
RUN pip install --upgrade pip && pip install .

# A regular (non-editable) install: setup.py's build step puts frontend/, migrations/ and
# alembic.ini inside the package (foldwise/_shipped/), so /build can go afterwards.
COPY alembic.ini ./
COPY migrations ./migrations
COPY backend ./backend
COPY frontend ./frontend
RUN pip install --no-deps --force-reinstall . \
    && cd / && rm -rf /build \
    && useradd --system --uid 10001 --home-dir /data foldwise \
    && mkdir -p /data && chown foldwise /data

# The clustering kernels compiled now, into a cache the service user can use (numba only
# uses a cache directory it can write): otherwise the first recluster spends ~14 s on it.
ENV NUMBA_CACHE_DIR=/var/cache/foldwise/numba
RUN mkdir -p "$NUMBA_CACHE_DIR" && foldwise compile-kernels && chown -R foldwise /var/cache/foldwise

WORKDIR /data
USER foldwise
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status != 200)"

# `serve` upgrades the database first (the prestart step), then serves on 0.0.0.0:8000.
CMD ["foldwise", "serve", "--host", "0.0.0.0", "--port", "8000"]
