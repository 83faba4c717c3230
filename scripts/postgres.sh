#!/usr/bin/env bash
# Starts a throw-away PostgreSQL on 127.0.0.1 for the test suite's PostgreSQL pass.
#   scripts/postgres.sh start <dir>   prints the admin connection URL on stdout
#   scripts/postgres.sh stop <dir>
# Installs Debian's postgresql package when no server binaries are found (needs root).
set -euo pipefail

find_bin() {
  local name=$1 dir
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$dir/$name" ]; then echo "$dir/$name"; return 0; fi
  done
  return 1
}

ensure_installed() {
  if find_bin initdb >/dev/null && find_bin pg_ctl >/dev/null; then return 0; fi
  if [ "$(id -u)" != "0" ]; then
    echo "PostgreSQL server binaries not found: install Debian's 'postgresql' package (apt-get install postgresql)" >&2
    exit 1
  fi
  echo "Installing Debian's postgresql package..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq postgresql >&2
  find_bin initdb >/dev/null || { echo "initdb still missing after installing postgresql" >&2; exit 1; }
}

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

# PostgreSQL refuses to run as root: run it as an unprivileged account.
as_pg_user() {
  if [ "$(id -u)" = "0" ]; then
    local user=postgres
    id -u "$user" >/dev/null 2>&1 || user=nobody
    runuser -u "$user" -- "$@"
  else
    "$@"
  fi
}

cmd=${1:?usage: postgres.sh start|stop <dir>}
dir=${2:?usage: postgres.sh start|stop <dir>}

case "$cmd" in
  start)
    ensure_installed
    initdb=$(find_bin initdb); pg_ctl=$(find_bin pg_ctl)
    mkdir -p "$dir"
    if [ "$(id -u)" = "0" ]; then
      user=postgres; id -u "$user" >/dev/null 2>&1 || user=nobody
      chown "$user" "$dir"
    fi
    port=$(free_port)
    as_pg_user "$initdb" -D "$dir/data" -U gateway --auth=trust -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    as_pg_user "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200" start >&2 \
      || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgres://gateway@127.0.0.1:$port/postgres"
    ;;
  stop)
    pg_ctl=$(find_bin pg_ctl)
    [ -d "$dir/data" ] && as_pg_user "$pg_ctl" -D "$dir/data" -m immediate stop >&2 || true
    ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
