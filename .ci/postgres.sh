#!/usr/bin/env bash
# Installs PostgreSQL from Debian's packages if it is missing, starts a cluster on 127.0.0.1 and creates a database in
# it. Prints the URL on its last line.
# Usage: .ci/postgres.sh [cluster port database]   (default: main 5432 storekeeper_test, for STOREKEEPER_TEST_POSTGRES_URL)
set -euo pipefail
cluster=${1:-main}
port=${2:-5432}
database=${3:-storekeeper_test}
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q postgresql >&2
fi
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
if ! pg_lsclusters -h | grep -q "^$version $cluster "; then
    pg_createcluster "$version" "$cluster" -p "$port" >&2
fi
# The tests run in parallel, each with a database of its own and a pool of up to 8 connections (4 per core): the
# default 100 ran out ("too many clients already", answered 503, which the end-to-end tests saw as lost deliveries),
# and so, once in a while, did 400, with 375 tests (the end-to-end scenarios on PostgreSQL refused connections).
if [ "$(pg_conftool -s "$version" "$cluster" show max_connections 2>/dev/null || true)" != "1000" ]; then
    pg_conftool "$version" "$cluster" set max_connections 1000 >&2
    pg_ctlcluster "$version" "$cluster" stop >&2 2>/dev/null || true
fi
pg_ctlcluster "$version" "$cluster" start >&2 2>/dev/null || true
for _ in $(seq 1 30); do
    pg_isready -h 127.0.0.1 -p "$port" -q && break
    sleep 1
done
su postgres -c "psql -p $port -q -c \"ALTER USER postgres PASSWORD 'storekeeper'\"" >&2
su postgres -c "psql -p $port -q -tc \"SELECT 1 FROM pg_database WHERE datname = '$database'\"" | grep -q 1 \
    || su postgres -c "createdb -p $port $database" >&2
echo "postgres://postgres:storekeeper@127.0.0.1:$port/$database?sslmode=disable"
