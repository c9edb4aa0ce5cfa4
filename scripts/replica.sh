#!/usr/bin/env bash
# A streaming replica of the local PostgreSQL, to run the gateway on a primary and a read replica
# (DATABASE_REPLICA_URLS) on one machine. PostgreSQL's own replication: pg_basebackup, then a standby
# that streams the primary's WAL.
#
#   scripts/replica.sh start [PORT]    base backup into a temporary directory, start the standby on PORT
#                                      (default 5433), wait until it streams; prints its URL on stdout
#   scripts/replica.sh stop [PORT]     stop it and delete its directory
#   scripts/replica.sh status [PORT]
#
# The primary: PRIMARY_HOST (127.0.0.1), PRIMARY_PORT (5432), user postgres, trust auth. It must accept
# replication connections from 127.0.0.1; when its pg_hba.conf has no rule for them and this user may
# write that file, the script adds `host replication postgres 127.0.0.1/32 trust` and reloads the primary.
# Exit status 3 (with the reason on stderr) when a replica cannot be made here: no pg_basebackup, or no
# replication allowed. Data: ${REPLICA_DIR:-/tmp/nftgw-replica-PORT}.
set -euo pipefail
cmd=${1:-}
port=${2:-5433}
primary_host=${PRIMARY_HOST:-127.0.0.1}
primary_port=${PRIMARY_PORT:-5432}
dir=${REPLICA_DIR:-/tmp/nftgw-replica-$port}
cannot() { echo "replica.sh: $*" >&2; exit 3; }

bindir=""
if command -v pg_config >/dev/null 2>&1; then bindir=$(pg_config --bindir); fi
if [ -z "$bindir" ] || [ ! -x "$bindir/pg_ctl" ]; then bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true); fi
[ -n "$bindir" ] && [ -x "$bindir/pg_basebackup" ] && [ -x "$bindir/pg_ctl" ] || cannot "pg_basebackup/pg_ctl not found (install the PostgreSQL server package)"

# PostgreSQL refuses to run as root: as root, the standby runs as the postgres user.
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
psql_primary() { psql -h "$primary_host" -p "$primary_port" -U postgres -d postgres -AtX -c "$1"; }

allow_replication() {
  local rules
  rules=$(psql_primary "SELECT count(*) FROM pg_hba_file_rules WHERE 'replication' = ANY(database) AND type IN ('host', 'hostnossl') AND (address IS NULL OR address IN ('127.0.0.1', 'all', 'samehost', 'samenet'))" 2>/dev/null || echo 0)
  [ "$rules" != 0 ] && return 0
  local hba
  hba=$(psql_primary "SHOW hba_file")
  [ -w "$hba" ] || cannot "the primary allows no replication connection from 127.0.0.1 and $hba is not writable here; add: host replication postgres 127.0.0.1/32 trust"
  echo "replica.sh: allowing replication from 127.0.0.1 in $hba" >&2
  printf '\n# added by scripts/replica.sh (nft gateway): streaming replicas on this machine\nhost replication postgres 127.0.0.1/32 trust\n' >>"$hba"
  psql_primary "SELECT pg_reload_conf()" >/dev/null
  sleep 1
}

start() {
  if [ -f "$dir/data/postmaster.pid" ] && as_pg "$bindir/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    echo "postgres://postgres@127.0.0.1:$port/postgres"
    return 0
  fi
  pg_isready -h "$primary_host" -p "$primary_port" >/dev/null 2>&1 || cannot "the primary $primary_host:$primary_port is not accepting connections"
  [ "$(psql_primary "SHOW wal_level")" != minimal ] || cannot "the primary's wal_level is minimal; streaming replication needs replica"
  allow_replication
  rm -rf "$dir"
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres "$dir"
  as_pg "$bindir/pg_basebackup" -h "$primary_host" -p "$primary_port" -U postgres -D "$dir/data" -X stream -R -c fast >&2 \
    || cannot "pg_basebackup failed (see above)"
  # A Debian cluster keeps its configuration outside the data directory: the standby gets its own. Settings
  # that a hot standby needs at least as high as the primary's are copied from it.
  {
    echo "port = $port"
    echo "listen_addresses = '127.0.0.1'"
    echo "unix_socket_directories = '$dir'"
    echo "hot_standby = on"
    echo "hba_file = '$dir/data/pg_hba.conf'"
    echo "ident_file = '$dir/data/pg_ident.conf'"
    for setting in max_connections max_worker_processes max_wal_senders max_prepared_transactions max_locks_per_transaction; do
      echo "$setting = $(psql_primary "SHOW $setting")"
    done
  } | as_pg tee "$dir/data/postgresql.conf" >/dev/null
  printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' | as_pg tee "$dir/data/pg_hba.conf" >/dev/null
  as_pg touch "$dir/data/pg_ident.conf"
  as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start >&2 || { cat "$dir/log" >&2; cannot "the standby did not start"; }
  for _ in $(seq 1 60); do
    if [ "$(psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -AtX -c "SELECT pg_is_in_recovery() AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming')" 2>/dev/null)" = t ]; then
      echo "postgres://postgres@127.0.0.1:$port/postgres"
      return 0
    fi
    sleep 0.5
  done
  cat "$dir/log" >&2
  cannot "the standby did not start streaming within 30 s"
}

stop() {
  if [ -d "$dir/data" ]; then as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >&2 || true; fi
  rm -rf "$dir"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) as_pg "$bindir/pg_ctl" -D "$dir/data" status ;;
  *) echo "usage: scripts/replica.sh start|stop|status [PORT]" >&2; exit 2 ;;
esac
