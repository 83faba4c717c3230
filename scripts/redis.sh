#!/usr/bin/env bash
# Starts a throw-away Redis on 127.0.0.1 for the job suite's BullMQ pass.
#   scripts/redis.sh start <dir>   prints the URL on stdout
#   scripts/redis.sh stop <dir>
# Installs Debian's redis-server package when missing (needs root).
set -euo pipefail
cmd=${1:?usage: redis.sh start|stop <dir>}
dir=${2:?usage: redis.sh start|stop <dir>}
case "$cmd" in
  start)
    if ! command -v redis-server >/dev/null 2>&1; then
      if [ "$(id -u)" != "0" ]; then echo "redis-server not found: install Debian's 'redis-server' package" >&2; exit 1; fi
      echo "Installing Debian's redis-server package..." >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq >&2
      apt-get install -y -qq redis-server >&2
    fi
    mkdir -p "$dir"
    port=$(node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize yes \
      --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --dir "$dir" >&2
    for _ in $(seq 1 100); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && break
      sleep 0.1
    done
    echo "redis://127.0.0.1:$port"
    ;;
  stop)
    [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
    ;;
  *) echo "unknown command $cmd" >&2; exit 2 ;;
esac
