#!/usr/bin/env bash
# cores-bench.sh: how kvserver's throughput scales with cores, beside
# redis-server, measured with Debian's redis-benchmark (issue 17, "many
# cores").
#
#   scripts/cores-bench.sh [--procs "1 2 4 8"] [--client-cores N] [--requests N]
#                          [--rounds N] [--conns N] [--kvserver BIN]
#                          [--io-threads N|cores] [--no-redis] [--settle SECONDS]
#
# The server runs pinned (taskset) to the first P cores with GOMAXPROCS=P, for
# each P in --procs; redis-benchmark runs pinned to the last --client-cores
# cores with as many threads, so client and server never share a core unless
# P reaches into the client's cores (then the row says "shared"). redis-server
# 7.0 runs on the first core (its commands are single-threaded) and, as a
# second reference, with --io-threads 4 on the first four cores. Workloads: 4 KiB
# SET then GET over --conns connections, unpipelined and pipelined 16, random
# keys (-r 100000). Reported per server and P: median ops/s over --rounds
# rounds (each round runs every configuration once, in turn), and the server's
# CPU seconds per million operations from /proc/PID/stat, counted until
# kvserver's write-behind has put the run's writes on disk
# (tier_disk_unsaved_groups back to 0). --io-threads sets
# kvserver's event loops (a number, or "cores": as many as its cores; default:
# the server's default); --no-redis leaves the redis-server rows out.
# --settle SECONDS waits that long after each run, inside its CPU window,
# instead of polling tier_disk_unsaved_groups: for kvservers older than that
# field, and for comparing them with newer ones on equal terms.
#
# Environment: REDIS_SERVER and REDIS_BENCHMARK name the binaries (default from
# PATH); LOADER (an ld-linux path) and LIBS (a library directory) run them
# through a carried loader, for a machine without Debian's packages.
set -euo pipefail
cd "$(dirname "$0")/.."

procs="1 2"
client_cores=""
requests=400000
rounds=3
conns=200
kvserver=""
io_threads=""
with_redis=1
settle_seconds=""
while [ $# -gt 0 ]; do
  case "$1" in
  --procs) procs=$2; shift 2 ;;
  --client-cores) client_cores=$2; shift 2 ;;
  --requests) requests=$2; shift 2 ;;
  --rounds) rounds=$2; shift 2 ;;
  --conns) conns=$2; shift 2 ;;
  --kvserver) kvserver=$2; shift 2 ;;
  --io-threads) io_threads=$2; shift 2 ;;
  --no-redis) with_redis=0; shift ;;
  --settle) settle_seconds=$2; shift 2 ;;
  -h | --help) grep '^#' "$0" | tail -n +2; exit 0 ;;
  *) echo "cores-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done

ncpu=$(nproc)
[ -n "$client_cores" ] || client_cores=$((ncpu / 2 > 0 ? ncpu / 2 : 1))
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
if [ -z "$kvserver" ]; then
  kvserver=$tmp/kvserver
  go build -o "$kvserver" ./cmd/kvserver
fi

# prog BIN: the command line that runs BIN, through the carried loader when
# LOADER is set (the loader runs BIN in its own process, so $! stays the
# server's PID).
prog() {
  if [ -n "${LOADER:-}" ]; then
    echo "$LOADER --library-path $LIBS $1"
  else
    echo "$1"
  fi
}
redis_server=$(prog "${REDIS_SERVER:-$(command -v redis-server)}")
redis_benchmark=$(prog "${REDIS_BENCHMARK:-$(command -v redis-benchmark)}")

client_set="$((ncpu - client_cores))-$((ncpu - 1))"
port=$((20000 + RANDOM % 20000))

# cpu_seconds PID: utime+stime of PID in seconds.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}

wait_port() {
  for _ in $(seq 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "cores-bench: nothing listens on $1" >&2
  return 1
}

# start NAME P: starts the server NAME with P cores on port $port; sets pid.
start() {
  local name=$1 p=$2 cores="0-$(($2 - 1))"
  rm -rf "$tmp/data"
  mkdir -p "$tmp/data"
  case "$name" in
  kvserver)
    local loops=()
    case "$io_threads" in
    "") ;;
    cores) loops=(--io-threads "$p") ;;
    *) loops=(--io-threads "$io_threads") ;;
    esac
    GOMAXPROCS=$p taskset -c "$cores" "$kvserver" --port "$port" --bind 127.0.0.1 --dir "$tmp/data" \
      --metrics-port 0 --maxmemory 8gb "${loops[@]}" >"$tmp/server.log" 2>&1 &
    ;;
  redis)
    local io=()
    [ "$p" -gt 1 ] && io=(--io-threads "$p" --io-threads-do-reads yes)
    # shellcheck disable=SC2086
    taskset -c "$cores" $redis_server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp/data" \
      --maxmemory 8gb "${io[@]}" >"$tmp/server.log" 2>&1 &
    ;;
  esac
  pid=$! # taskset execs the server: this is its PID
  wait_port "$port"
}

stop() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  port=$((port + 1))
}

# unsaved: kvserver's INFO tier_disk_unsaved_groups (groups its write-behind
# has still to put on disk); empty for a server without the field.
unsaved() {
  local line
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'INFO tiers\r\n' >&3
  while IFS= read -r -t 2 line <&3; do
    line=${line%$'\r'}
    case "$line" in
    tier_disk_unsaved_groups:*) echo "${line#*:}"; break ;;
    tiers:* | '# Tiers' | '$'*) ;;
    '') break ;;
    esac
  done
  exec 3<&-
}

# settle: waits until the server has put on disk what it was given (at most
# a minute), so that a run's CPU includes its own write-behind and no
# earlier one's.
settle() {
  local n
  if [ -n "$settle_seconds" ]; then
    sleep "$settle_seconds"
    return 0
  fi
  for _ in $(seq 600); do
    n=$(unsaved)
    [ -z "$n" ] || [ "$n" = 0 ] && return 0
    sleep 0.1
  done
}

# bench TEST PIPELINE: one redis-benchmark run; prints ops/s and CPU s per 1M
# ops, write-behind included (settle).
bench() {
  local test=$1 pipe=$2 before after out
  [ -n "$settle_seconds" ] || settle # with --settle, the run before waited
  before=$(cpu_seconds "$pid")
  # shellcheck disable=SC2086
  out=$(taskset -c "$client_set" $redis_benchmark -h 127.0.0.1 -p "$port" --threads "$client_cores" -c "$conns" -n "$requests" \
    -r 100000 -d 4096 -P "$pipe" -t "$test" --csv -q 2>/dev/null | grep -v '^"test"' | tail -1)
  settle
  after=$(cpu_seconds "$pid")
  local ops
  ops=$(echo "$out" | awk -F'"' '{ print $4 }')
  awk -v ops="$ops" -v a="$after" -v b="$before" -v n="$requests" \
    'BEGIN { printf "%.0f %.2f\n", ops, (a - b) / n * 1e6 }'
}

configs=()
for p in $procs; do configs+=("kvserver:$p"); done
[ "$with_redis" = 1 ] && configs+=("redis:1" "redis:4")
declare -A results
for round in $(seq "$rounds"); do
  for cfg in "${configs[@]}"; do
    name=${cfg%%:*} p=${cfg##*:}
    [ "$p" -le "$ncpu" ] || continue
    start "$name" "$p"
    for w in "set 1" "get 1" "set 16" "get 16"; do
      # shellcheck disable=SC2086
      results["$cfg $w"]+="$(bench $w) ;"
    done
    stop
  done
  echo "round $round done" >&2
done

# median of "ops cpu ;" pairs: prints the median ops and the median CPU.
median() {
  local pairs col
  pairs=$(tr ';' '\n' | awk 'NF == 2')
  for col in 1 2; do
    echo "$pairs" | awk -v c="$col" '{ print $c }' | sort -g | awk '{ v[NR] = $1 } END { printf "%s ", v[int((NR + 1) / 2)] }'
  done | awk '{ printf "%10d %8.2f", $1, $2 }'
}

printf "%d cores; redis-benchmark on cores %s (%d threads), %d connections, 4 KiB values, %d requests, medians of %d rounds; kvserver io-threads: %s\n" \
  "$ncpu" "$client_set" "$client_cores" "$conns" "$requests" "$rounds" "${io_threads:-default}"
printf "%-14s %-9s %10s %8s %10s %8s %10s %8s %10s %8s\n" server cores "SET ops/s" "CPU/Mop" "GET ops/s" "CPU/Mop" \
  "SET P16" "CPU/Mop" "GET P16" "CPU/Mop"
for cfg in "${configs[@]}"; do
  name=${cfg%%:*} p=${cfg##*:}
  [ "$p" -le "$ncpu" ] || continue
  label=$p
  [ "$p" -gt $((ncpu - client_cores)) ] && label="$p shared"
  [ "$name" = redis ] && [ "$p" -gt 1 ] && label="$p io-thr"
  printf "%-14s %-9s" "$name" "$label"
  for w in "set 1" "get 1" "set 16" "get 16"; do
    printf " %s" "$(echo "${results["$cfg $w"]}" | median)"
  done
  echo
done
