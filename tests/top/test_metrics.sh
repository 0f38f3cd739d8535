#!/bin/sh
# SPDX-License-Identifier: MIT
# ptshare top --listen: /metrics scraped by a real Prometheus server.
# snap_subject's workload (4 processes of one command, each sharing 59 PTE
# tables with the 3 others under mccracken-2005: 3 x 59 tables, 724992
# bytes saved in all) watched with --group-by command; its /metrics
# answers GET with the OpenMetrics text promtool accepts (and 404, 405 to
# the rest), and Prometheus (/usr/bin/prometheus, on 127.0.0.1 with a
# temporary configuration and storage, scraping every second) gives back,
# through its query API, the very values ptshare served.
#   test_metrics.sh PTSHARE SNAP_SUBJECT LIB
ptshare=$1
. "$3"
. "$(dirname "$0")/subject.sh"
need prometheus promtool curl jq
start_subject "$2"
top_pid=
prom_pid=
cleanup() {
	[ -z "$top_pid" ] || kill "$top_pid" 2>/dev/null || true
	[ -z "$prom_pid" ] || kill "$prom_pid" 2>/dev/null || true
	wait $top_pid $prom_pid 2>/dev/null || true
	stop_subject
	rm -rf "$tmp"
}
trap cleanup EXIT

"$ptshare" top -d 1 --listen 127.0.0.1:0 --pid "$parent" --tree \
	--group-by command --policy mccracken-2005,aslr-tolerant \
	>"$tmp/top.out" 2>"$tmp/top.err" &
top_pid=$!
url=$(top_url "$tmp/top.err")
target=${url#http://}
target=${target%/metrics}
case $target in 127.0.0.1:*) ;; *) fail "not on loopback: $url" ;; esac

# What ptshare serves, and how.
curl -sS -D "$tmp/head" -o "$tmp/metrics" "$url" || fail "GET $url"
grep -q '^HTTP/1.1 200 OK' "$tmp/head" || fail "GET: $(cat "$tmp/head")"
grep -qi '^Content-Type: text/plain; version=0.0.4' "$tmp/head" ||
	fail "type: $(cat "$tmp/head")"
promtool check metrics <"$tmp/metrics" >"$tmp/check" 2>&1 ||
	fail "promtool: $(cat "$tmp/check")"
[ ! -s "$tmp/check" ] || fail "promtool says: $(cat "$tmp/check")"
tail -n 1 "$tmp/metrics" | grep -qx '# EOF' || fail "no # EOF"
curl -sS -D "$tmp/head" -o /dev/null \
	-H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5' \
	"$url" || fail "GET with Accept"
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' \
	"$tmp/head" || fail "OpenMetrics type: $(cat "$tmp/head")"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$target/other")
[ "$code" = 404 ] || fail "GET /other: $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")
[ "$code" = 405 ] || fail "POST /metrics: $code"

# An address it cannot listen on, or that is none: said, exit 1.
for bad in "$target" "127.0.0.1:port" ":9977"; do
	if "$ptshare" top -n 1 --listen "$bad" >/dev/null 2>"$tmp/bad"; then
		fail "--listen $bad: exit 0"
	fi
	grep -q "^ptshare top: --listen $bad: " "$tmp/bad" ||
		fail "--listen $bad: $(cat "$tmp/bad")"
done

# The value of series $1 in what ptshare served.
served() {
	awk -v s="$1" '$1 == s { print $2 }' "$tmp/metrics"
}
[ "$(served 'ptshare_processes{group="snap_subject"}')" = 4 ] ||
	fail "processes: $(grep ptshare_processes "$tmp/metrics")"
[ "$(served 'ptshare_saved_bytes{policy="mccracken-2005",group="snap_subject"}')" \
	= 724992 ] || fail "saved: $(grep ptshare_saved_bytes "$tmp/metrics")"

# Prometheus, on a port of its own (the first free from one of ours).
cat >"$tmp/prometheus.yml" <<EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: ptshare
    static_configs:
      - targets: ['$target']
EOC
promtool check config "$tmp/prometheus.yml" >/dev/null ||
	fail "promtool check config"
port=$((20000 + $$ % 20000))
for try in 1 2 3 4 5 6 7 8 9 10; do
	mkdir -p "$tmp/tsdb.$try"
	prometheus --config.file="$tmp/prometheus.yml" \
		--storage.tsdb.path="$tmp/tsdb.$try" \
		--web.listen-address="127.0.0.1:$port" >"$tmp/prom.log" 2>&1 &
	prom_pid=$!
	i=0
	while kill -0 "$prom_pid" 2>/dev/null &&
		! curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null; do
		i=$((i + 1))
		[ $i -lt 300 ] || fail "prometheus is not ready: $(tail "$tmp/prom.log")"
		sleep 0.1
	done
	kill -0 "$prom_pid" 2>/dev/null && break
	grep -q 'address already in use' "$tmp/prom.log" ||
		fail "prometheus: $(tail "$tmp/prom.log")"
	prom_pid=
	port=$((port + 1))
done
[ -n "$prom_pid" ] || fail "no free port for prometheus"

# A query's value (the first series'), through the HTTP API.
query() {
	curl -sfG "http://127.0.0.1:$port/api/v1/query" \
		--data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}
i=0
until [ "$(query 'up{job="ptshare"}')" = 1 ] &&
	[ -n "$(query 'ptshare_processes')" ]; do
	i=$((i + 1))
	[ $i -lt 600 ] || fail "no scrape in 60 s: $(tail "$tmp/prom.log")"
	sleep 0.1
done
echo "scraped: up 1"
# Every series ptshare served, read back; the subject is quiet, so every
# refresh serves the same values.
grep -v '^#' "$tmp/metrics" >"$tmp/samples"
n=0
while read -r series value; do
	got=$(query "$series")
	[ "$got" = "$value" ] || fail "$series: prometheus '$got', ptshare $value"
	n=$((n + 1))
done <"$tmp/samples"
[ "$n" -ge 20 ] || fail "only $n series"
echo "$n series read back: ok"
[ "$(query 'count({__name__=~"ptshare_.*"})')" = \
	"$(grep -vc '^#' "$tmp/metrics")" ] || fail "series count"
# The fleet's queries of docs/fleet.md.
[ "$(query 'sum(ptshare_saved_bytes{policy="mccracken-2005"})')" = 724992 ] ||
	fail "sum of the savings"
[ "$(query 'sum by (group) (ptshare_processes)')" = 4 ] || fail "sum by group"
echo "prometheus: ok"
