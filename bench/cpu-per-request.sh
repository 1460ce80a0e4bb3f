#!/usr/bin/env bash
# CPU time per request of the server process (and of PostgreSQL's processes), which is steadier than
# requests per second on a shared 2-core machine. The server must already be running.
#   bench/cpu-per-request.sh URL [SERVER_PATTERN] [SECONDS]
# with API_KEY in the environment when the URL needs one; SERVER_PATTERN (default src/server.ts) is
# matched by pgrep -f, or a process id (when other servers run the same command line). With PG_DATABASE set, only
# PostgreSQL's backends of that database are counted (when other work runs on the same server), else all of its
# processes. wrk runs on core 1 (taskset), 50 connections, after a 2-second warm-up.
# With POST_BODY in the environment, each request is a POST of that body as JSON (Content-Type application/json,
# Accept application/json, text/event-stream: the MCP endpoint's), sent by a wrk script.
set -euo pipefail
url=$1; pattern=${2:-src/server.ts}; seconds=${3:-8}
header=(); [ -n "${API_KEY:-}" ] && header=(-H "x-api-key: $API_KEY")
post=(); script=(); data=()
if [ -n "${POST_BODY:-}" ]; then
  post=(-H 'content-type: application/json' -H 'accept: application/json, text/event-stream')
  lua=$(mktemp --suffix=.lua); trap 'rm -f "$lua"' EXIT
  # A Lua long string holds the body as it is (no escapes); the level is past any "]=*]" in it.
  level='='; while [[ $POST_BODY == *"]$level]"* ]]; do level="$level="; done
  printf 'wrk.method = "POST"\nwrk.body = [%s[%s]%s]\n' "$level" "$POST_BODY" "$level" > "$lua"
  script=(-s "$lua"); data=(-d "$POST_BODY")
fi
tick=$(getconf CLK_TCK)
# A refused request (401 without API_KEY, 429) is cheap: measuring those would pass for a fast server.
status=$(curl -s -o /dev/null -w '%{http_code}' "${header[@]}" "${post[@]}" "${data[@]}" "$url")
case $status in 2??) ;; *) echo "$url answered $status, not 2xx: nothing to measure (is API_KEY exported?)" >&2; exit 1 ;; esac
cpu() { local t=0 p; for p in "$@"; do [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "$t"; }
taskset -c 1 wrk -t1 -c50 -d2s "${header[@]}" "${post[@]}" "${script[@]}" "$url" > /dev/null
# After the warm-up, so that the connection pool's PostgreSQL backends exist; never this script itself.
if [[ $pattern =~ ^[0-9]+$ ]]; then server=$pattern; else server=$( (pgrep -f "$pattern" || true) | grep -vx "$$" | tr '\n' ' '); fi
if [ -n "${PG_DATABASE:-}" ]; then postgres=$( (pgrep -u postgres -f "postgres: .* $PG_DATABASE " || true) | tr '\n' ' ')
else postgres=$( (pgrep -u postgres || true) | tr '\n' ' '); fi
[ -n "${server// /}" ] || { echo "no process matches $pattern" >&2; exit 1; }
s0=$(cpu $server); p0=$(cpu $postgres)
out=$(taskset -c 1 wrk -t1 -c50 -d"${seconds}s" "${header[@]}" "${post[@]}" "${script[@]}" "$url")
s1=$(cpu $server); p1=$(cpu $postgres)
requests=$(awk '/requests in/ {print $1}' <<< "$out")
if grep -q 'Non-2xx' <<< "$out"; then echo "some answers were not 2xx: $(grep 'Non-2xx' <<< "$out")" >&2; exit 1; fi
# One decimal: a change of a microsecond or less (a hit costs ~20 µs) is what this script is run to see.
per() { awk -v t="$1" -v tick="$tick" -v n="$requests" 'BEGIN { printf "%.1f", t * 1000000 / tick / n }'; }
echo "$(awk '/Requests\/sec/ {print $2}' <<< "$out") req/s," \
  "server $(per $((s1 - s0))) µs/request," \
  "postgres $(per $((p1 - p0))) µs/request"
