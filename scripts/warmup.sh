#!/usr/bin/env bash
# warmup.sh: throughput per second of a SET storm on a freshly started
# server, to check that a new kvserver reaches full speed within a second
# (issue 17: 50 x 1 MiB SETs started at about 300 req/s for the first 4 s).
#
#   scripts/warmup.sh [kvserver|redis] [PORT]
#
# Starts the server on an empty data directory (kvserver is built from this
# checkout; redis is redis-server with no persistence), runs
#
#   redis-benchmark -p PORT -c 50 -n 20000 -d 1048576 -t set -r 1000
#
# and reads total_commands_processed from INFO every 250 ms. It prints the
# commands per second of each second, then the first second's rate against
# the steady state (the median of seconds 2 and later, the last partial
# second left out) as "first_second_ratio". The issue's acceptance is a
# ratio of at least 0.8. Each second also shows the server's minor page
# faults and CPU time per SET (from /proc/PID/stat), which a busy shared
# machine disturbs less than the rates. CLIENTS, REQUESTS and SIZE override
# -c, -n and -d; KVSERVER names a kvserver binary to run instead of building
# one (to compare two builds).
set -euo pipefail
cd "$(dirname "$0")/.."

which=${1:-kvserver}
port=${2:-16399}
clients=${CLIENTS:-50}
requests=${REQUESTS:-20000}
size=${SIZE:-1048576}
tmp=$(mktemp -d)
pid=
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

case $which in
kvserver)
  bin=${KVSERVER:-}
  if [[ -z $bin ]]; then
    bin=$tmp/kvserver
    go build -o "$bin" ./cmd/kvserver
  fi
  "$bin" --dir "$tmp/data" --port "$port" --metrics-port 0 --log-level warn &
  pid=$!
  ;;
redis)
  redis-server --port "$port" --save '' --appendonly no --dir "$tmp" --logfile "$tmp/redis.log" &
  pid=$!
  ;;
*)
  echo "usage: $0 [kvserver|redis] [PORT]" >&2
  exit 2
  ;;
esac
for _ in $(seq 100); do
  redis-cli -p "$port" ping >/dev/null 2>&1 && break
  sleep 0.05
done

processed() { redis-cli -p "$port" info stats | tr -d '\r' | sed -n 's/^total_commands_processed://p'; }
# procstat prints the server's minor page faults and CPU ticks (user+system).
procstat() { awk '{ print $10, $14 + $15 }' "/proc/$pid/stat"; }

redis-benchmark -p "$port" -c "$clients" -n "$requests" -d "$size" -t set -r 1000 -q >"$tmp/bench.out" 2>&1 &
bench=$!
start=$(date +%s.%N)
: >"$tmp/samples"
while kill -0 "$bench" 2>/dev/null; do
  echo "$(date +%s.%N) $(processed) $(procstat)" >>"$tmp/samples"
  sleep 0.25
done
wait "$bench"
tr '\r' '\n' <"$tmp/bench.out" | grep -v '^$' | tail -1

# Per-second rates from the samples, interpolated at whole seconds after
# the benchmark started.
# Columns: second, commands, minor faults, CPU ticks (1/100 s).
awk -v start="$start" '
  { t[NR] = $1 - start; for (c = 2; c <= 4; c++) x[NR, c] = $c }
  END {
    for (c = 2; c <= 4; c++) prev[c] = x[1, c]
    for (s = 1; s <= int(t[NR]); s++) {
      for (i = 2; i < NR && t[i] < s; i++) {}
      f = (s - t[i-1]) / (t[i] - t[i-1])
      printf "%d", s
      for (c = 2; c <= 4; c++) {
        v = x[i-1, c] + (x[i, c] - x[i-1, c]) * f
        printf " %d", v - prev[c]
        prev[c] = v
      }
      printf "\n"
    }
  }' "$tmp/samples" >"$tmp/rates"
awk '{ printf "second %d: %d SET/s, %.1f minor faults and %.2f ms server CPU per SET\n",
  $1, $2, $2 ? $3 / $2 : 0, $2 ? $4 * 10 / $2 : 0 }' "$tmp/rates"
first=$(awk '$1 == 1 { print $2 }' "$tmp/rates")
steady=$(awk '$1 >= 2 { print $2 }' "$tmp/rates" | sort -n |
  awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }')
if [[ -z $first || -z $steady ]]; then
  echo "too short to compare"
  exit 1
fi
echo "steady state (median of seconds 2 on): $steady SET/s"
awk -v f="$first" -v s="$steady" 'BEGIN { printf "first_second_ratio: %.2f\n", f / s }'
