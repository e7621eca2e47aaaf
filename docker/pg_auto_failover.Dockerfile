# A pg_auto_failover node or monitor for docker-compose.yml's `ha` profile (docs/OPERATIONS.md):
# the official Postgres 15 image with the same postgresql-15-auto-failover package that .ci/run
# installs from Debian (the image's own apt sources carry it too).
FROM postgres:15-bookworm
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15-auto-failover \
 && rm -rf /var/lib/apt/lists/*
USER postgres
ENV PGDATA=/var/lib/postgresql/pgaf
WORKDIR /var/lib/postgresql
