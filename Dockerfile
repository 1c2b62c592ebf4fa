# The HTTP API and its web page under gunicorn, as docs/api.md runs it. SQLite in the volume
# /var/lib/costmodel by default; set COSTMODEL_DB=postgresql://... to share a PostgreSQL run
# store between instances (compose.yaml runs two). Build and run:
#   docker build -t gpu-costmodel .
#   docker run --rm -p 127.0.0.1:8000:8000 gpu-costmodel      # then http://127.0.0.1:8000/
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The package with the PostgreSQL driver; the sources are not kept (only what pip installs).
COPY . /tmp/src
RUN pip install "/tmp/src[postgres]" && rm -rf /tmp/src

# A system user without a login shell owns the data directory; the service never runs as root.
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/costmodel \
        --shell /usr/sbin/nologin costmodel
USER costmodel
WORKDIR /var/lib/costmodel
VOLUME ["/var/lib/costmodel"]

# The settings are docs/api.md's COSTMODEL_* variables; these are the defaults of this image.
# GUNICORN_CMD_ARGS holds gunicorn's options, so `docker run -e GUNICORN_CMD_ARGS=...` changes
# them (keep --timeout above the slowest request COSTMODEL_MAX_WORK allows).
ENV COSTMODEL_DB=/var/lib/costmodel/runs.sqlite3 \
    GUNICORN_CMD_ARGS="--bind 0.0.0.0:8000 --workers 2 --timeout 120 --access-logfile -"

EXPOSE 8000

# 200 when the catalog loads and the run store answers, else 503 (and unhealthy).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=4)"]

CMD ["gunicorn", "-c", "python:api.gunicorn_conf", "api:create_app()"]
