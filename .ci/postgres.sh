#!/usr/bin/env bash
# Installs PostgreSQL from Debian's packages if it is missing, starts it on 127.0.0.1:5432, and creates the test
# database. Prints the URL for STOREKEEPER_TEST_POSTGRES_URL on its last line.
set -euo pipefail
if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q postgresql >&2
fi
version=$(ls /usr/lib/postgresql | sort -V | tail -1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
    pg_createcluster "$version" main >&2
fi
pg_ctlcluster "$version" main start >&2 2>/dev/null || true
for _ in $(seq 1 30); do
    pg_isready -h 127.0.0.1 -p 5432 -q && break
    sleep 1
done
su postgres -c "psql -q -c \"ALTER USER postgres PASSWORD 'storekeeper'\"" >&2
su postgres -c "psql -q -tc \"SELECT 1 FROM pg_database WHERE datname = 'storekeeper_test'\"" | grep -q 1 \
    || su postgres -c "createdb storekeeper_test" >&2
echo "postgres://postgres:storekeeper@127.0.0.1:5432/storekeeper_test?sslmode=disable"
