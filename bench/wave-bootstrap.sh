#!/usr/bin/env bash
# Runs the engine-neutral wave-bootstrap benchmark (../shared/bench) against
# wavecd: a fresh local cluster with 3 nodes, the CRDs, the generated repo,
# the controller as a process, then the shared measure.py. Usage:
#
#   bench/wave-bootstrap.sh waves          # 7 waves, 3 s readiness each
#   bench/wave-bootstrap.sh waves-instant  # 7 waves, instantly ready
#   bench/wave-bootstrap.sh idle           # COUNT apps of one ConfigMap, then 3 min idle
#
# COUNT is the idle scenario's app count (default 200). measure.py polls
# every INTERVAL seconds (default: 0.5 s up to 50 apps, COUNT/100 s
# beyond: each poll lists every app, which at thousands costs the machine
# more than the engine); bench/watch-apps.py stamps the exact moment every
# app is Synced+Healthy from a watch, and samples the controller then.
# IDLE_SECONDS shortens the idle phase; CONTROLLER_ARGS adds controller
# flags (e.g. "--pprof-listen 127.0.0.1:6060" to profile a run), and
# CONTROLLER_ENV variables for the controller alone (e.g. "GOGC=50").
#
# The idle scenario reports (bench/bootstrap-report.py): the time from the
# root's creation to all apps Synced+Healthy, the controller's CPU seconds,
# resident memory and its peak then, its settled memory and idle CPU, and
# API requests per app by verb (the controller's own, and the API server's
# from every client).
#
# Results (JSON) go to bench/results/<scenario>[-COUNT]-<time>.json.
set -euo pipefail
scenario=${1:?usage: bench/wave-bootstrap.sh waves|waves-instant|idle}
root=$(cd "$(dirname "$0")/.." && pwd)
shared=${SHARED:-$root/../shared}
suite=$shared/bench/wave-bootstrap
[ -f "$suite/measure.py" ] || { echo "benchmark scripts not found in $suite (set SHARED=...)" >&2; exit 1; }
[ -x "$root/bin/wavecd" ] && [ -x "$root/bin/wavecd-localcluster" ] || { echo "run make build first" >&2; exit 1; }

work=$(mktemp -d /tmp/wavecd-bench.XXXXXX)
ctrl="" proxy="" watcher=""
cleanup() {
  for p in $watcher $proxy; do kill "$p" 2>/dev/null || true; done
  [ -n "$ctrl" ] && kill "$ctrl" 2>/dev/null && wait "$ctrl" 2>/dev/null || true
  "$root/bin/wavecd-localcluster" stop --dir "$work/cluster" >/dev/null 2>&1 || true
  [ -n "${out:-}" ] && [ -f "$work/controller.log" ] && cp "$work/controller.log" "${out%.json}.controller.log"
  rm -rf "$work"
}
trap cleanup EXIT

gen=(--scenario waves) expect=8 extra=() count=7 interval=${INTERVAL:-0.5} name=$scenario
case "$scenario" in
  waves) ;;
  waves-instant) gen+=(--ready-delay 0s) ;;
  idle)
    count=${COUNT:-200}
    gen=(--scenario idle --count "$count") expect=$((count + 1)) name=idle-$count
    interval=${INTERVAL:-$(python3 -c "print(max(0.5, $count / 100))")}
    extra=(--idle "${IDLE_SECONDS:-180}" --timeout "$((600 + count / 5))") ;;
  *) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac

"$root/bin/wavecd-localcluster" start --dir "$work/cluster" --nodes 3 --detach
export KUBECONFIG=$work/cluster/kubeconfig
"$root/bin/wavecd" install crds >/dev/null
kubectl create namespace argocd >/dev/null
python3 "$suite/gen_repo.py" "$work/repo" --repo-url "$work/repo" "${gen[@]}" >/dev/null

# shellcheck disable=SC2086 # CONTROLLER_ARGS is a list of flags
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env ${CONTROLLER_ENV:-} "$root/bin/wavecd" controller --leader-elect=false --namespace argocd --cache-dir "$work/cache" --listen "127.0.0.1:$port" ${CONTROLLER_ARGS:-} >"$work/controller.log" 2>&1 &
ctrl=$!
# The clock starts when the root app is created: wait until the controller
# is ready (caches synced), as a running Argo CD would be.
for _ in $(seq 300); do
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  kill -0 "$ctrl" 2>/dev/null || { cat "$work/controller.log" >&2; exit 1; }
  sleep 0.1
done
# Warm what an installation that has run for a while has warm: kubectl's
# discovery cache and the API server's OpenAPI schema of the (large)
# Application CRD, which kubectl fetches to validate the create. Cold, the
# first create can take seconds that no engine spends.
kubectl create --dry-run=server -f "$work/repo/bootstrap/root-app.yaml" >/dev/null
mkdir -p "$root/bench/results"
out=$root/bench/results/$name-$(date +%Y%m%dT%H%M%S).json
if [ "$scenario" = idle ]; then
  kubectl proxy --address 127.0.0.1 --port 0 >"$work/proxy.log" 2>&1 &
  proxy=$!
  for _ in $(seq 100); do grep -q 'Starting to serve' "$work/proxy.log" && break; sleep 0.1; done
  proxy_url=http://$(sed -n 's/^Starting to serve on //p' "$work/proxy.log")
  mkdir -p "$work/watch"
  curl -fsS "$proxy_url/metrics" >"$work/apiserver-base.prom"
  python3 "$root/bench/watch-apps.py" --proxy "$proxy_url" --expect "$expect" --out "$work/watch" \
    --scrape "controller=http://127.0.0.1:$port/metrics" --scrape "apiserver=$proxy_url/metrics" \
    --pid "controller=$ctrl" --timeout "$((600 + count / 5))" &
  watcher=$!
  extra+=(--pid "controller=$ctrl")
fi
python3 "$suite/measure.py" run --kubeconfig "$KUBECONFIG" --root-app "$work/repo/bootstrap/root-app.yaml" \
  --expect "$expect" --interval "$interval" --out "$out" "${extra[@]}"
echo "controller CPU seconds: $(awk '{print ($14+$15)/100}' /proc/$ctrl/stat)"
if [ -n "$watcher" ]; then
  wait "$watcher" || echo "the watch did not see every app Synced+Healthy" >&2
  watcher=""
  python3 "$root/bench/bootstrap-report.py" --result "$out" --watch "$work/watch" \
    --base "$work/apiserver-base.prom" --apps "$count"
fi
# API requests the cluster served during the run (all clients), by verb,
# and the busiest verb/resource pairs.
kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ {
  match($0, /verb="[A-Z]+"/); verb = substr($0, RSTART+6, RLENGTH-7)
  match($0, /resource="[a-z]*"/); res = substr($0, RSTART+10, RLENGTH-11)
  n[verb] += $NF; pair[verb " " res] += $NF; total += $NF }
  END { printf "API requests: %d (", total; for (v in n) printf " %s=%d", v, n[v]; print " )"
        for (p in pair) if (pair[p] >= 100) printf "  %s: %d\n", p, pair[p] }' || true
echo "result: $out"
