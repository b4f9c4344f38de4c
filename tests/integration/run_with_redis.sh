#!/usr/bin/env bash
# Starts a private redis-server on loopback (no persistence), runs a command
# with ADMITSIM_REDIS_PORT naming the server's port, and stops that server
# however the command ends. Exits with the command's status.
#
#   tests/integration/run_with_redis.sh ctest --test-dir build -L redis
#   tests/integration/run_with_redis.sh build/tests/integration/redis_agreement_test
#
# Port: ADMITSIM_REDIS_PORT if set (it must be free), else the first free port
# from 6390 to 6439. The server's pidfile, log and working directory live in a
# temporary directory that is removed afterwards. Only the server this script
# started is ever stopped (by its process id).
set -euo pipefail

if [ "$#" -eq 0 ]; then
  echo "usage: $0 <command> [arguments...]" >&2
  exit 2
fi

server_bin="redis-server"
cli_bin="redis-cli"
for bin in "$server_bin" "$cli_bin"; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "run_with_redis.sh: $bin not found; install it with scripts/setup.sh" >&2
    exit 1
  fi
done

workdir="$(mktemp -d "${TMPDIR:-/tmp}/admitsim-redis.XXXXXX")"
pidfile="$workdir/redis.pid"
logfile="$workdir/redis.log"
server_pid=""

stop_server() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 100); do
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  server_pid=""
}
cleanup() {
  stop_server
  rm -rf "$workdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Starts a server on $1; succeeds once that very server (checked by process
# id) answers PING.
start_on() {
  local port="$1" pid answering
  if port_in_use "$port"; then return 1; fi
  rm -f "$pidfile" "$logfile"
  "$server_bin" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --pidfile "$pidfile" --dir "$workdir" --logfile "$logfile" || return 1
  for _ in $(seq 100); do
    if [ -s "$pidfile" ]; then
      pid="$(cat "$pidfile")"
      if [ "$("$cli_bin" -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = "PONG" ]; then
        answering="$("$cli_bin" -h 127.0.0.1 -p "$port" info server 2>/dev/null |
          tr -d '\r' | sed -n 's/^process_id://p')"
        if [ "$answering" = "$pid" ]; then
          server_pid="$pid"
          return 0
        fi
        server_pid="$pid"  # ours lost the port to another server: stop ours
        stop_server
        return 1
      fi
    elif grep -qE "Could not create server TCP|Failed listening|Address already in use" \
        "$logfile" 2>/dev/null; then
      return 1
    fi
    sleep 0.1
  done
  if [ -s "$pidfile" ]; then
    server_pid="$(cat "$pidfile")"
    stop_server
  fi
  return 1
}

if [ -n "${ADMITSIM_REDIS_PORT:-}" ]; then
  candidates=("$ADMITSIM_REDIS_PORT")
else
  candidates=($(seq 6390 6439))
fi

port=""
for candidate in "${candidates[@]}"; do
  if start_on "$candidate"; then
    port="$candidate"
    break
  fi
done
if [ -z "$port" ]; then
  echo "run_with_redis.sh: could not start redis-server on 127.0.0.1 port(s) ${candidates[*]}" >&2
  [ -s "$logfile" ] && sed 's/^/  redis: /' "$logfile" >&2
  exit 1
fi

echo "run_with_redis.sh: redis-server (pid $server_pid) on 127.0.0.1:$port" >&2
status=0
ADMITSIM_REDIS_PORT="$port" "$@" || status=$?
exit "$status"
