#!/usr/bin/env bash
# A second PostgreSQL cluster (port 5433) that the outage test alone crash-restarts, so that the other database tests
# keep theirs. Run after .ci/postgres.sh (which installs PostgreSQL). Prints an export line for eval.
set -euo pipefail
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
if ! pg_lsclusters -h | grep -q "^$version outage"; then
    pg_createcluster "$version" outage -p 5433 >&2
fi
pg_ctlcluster "$version" outage start >&2 2>/dev/null || true
for _ in $(seq 1 30); do
    pg_isready -h 127.0.0.1 -p 5433 -q && break
    sleep 1
done
su postgres -c "psql -p 5433 -q -c \"ALTER USER postgres PASSWORD 'storekeeper'\"" >&2
su postgres -c "psql -p 5433 -q -tc \"SELECT 1 FROM pg_database WHERE datname = 'storekeeper_outage'\"" | grep -q 1 \
    || su postgres -c "createdb -p 5433 storekeeper_outage" >&2
echo "export STOREKEEPER_TEST_POSTGRES_OUTAGE_URL='postgres://postgres:storekeeper@127.0.0.1:5433/storekeeper_outage?sslmode=disable'"
