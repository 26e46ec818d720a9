#!/usr/bin/env bash
# Measures the controller's and the renderer's peak memory under hostile
# input, as docs/reliability.md reports it:
#
#   lua-rep     a Lua health check in argocd-cm that calls string.rep in a loop
#   lua-table   a Lua health check that grows a table without end
#   manifest    `wavecd render` of a folder holding one 50 MB manifest, and of
#               50 MB of 1 KB manifests (default limits, then limits raised)
#
# Usage: bench/memory-bounds.sh [lua-rep|lua-table|manifest|all]
# WAVECD=path/to/wavecd measures another build (e.g. an older one), SECONDS_RUN
# sets how long the controller runs with the hostile check (default 30).
# The controller runs under a 3 GB address-space limit, so a build without
# memory bounds fails instead of exhausting the machine.
set -euo pipefail
what=${1:-all}
root=$(cd "$(dirname "$0")/.." && pwd)
wavecd=${WAVECD:-$root/bin/wavecd}
[ -x "$wavecd" ] && [ -x "$root/bin/wavecd-localcluster" ] || { echo "run make build first" >&2; exit 1; }
command -v kubectl >/dev/null || { echo "kubectl is needed" >&2; exit 1; }

work=$(mktemp -d /tmp/wavecd-memory.XXXXXX)
cleanup() {
  "$root/bin/wavecd-localcluster" stop --dir "$work/cluster" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

declare -A scripts=(
  [lua-rep]='local t = {} while true do t[#t+1] = string.rep("x", 10000000) end'
  [lua-table]='local t = {} local i = 0 while true do i = i + 1 t[i] = {i} end'
)

lua() {
  local name=$1
  if [ ! -f "$work/cluster/kubeconfig" ]; then
    "$root/bin/wavecd-localcluster" start --dir "$work/cluster" --nodes 1 --detach >/dev/null
  fi
  export KUBECONFIG=$work/cluster/kubeconfig
  "$wavecd" install crds >/dev/null
  kubectl create namespace "$name" >/dev/null
  mkdir -p "$work/repo-$name/app"
  for i in $(seq 20); do
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\n' "$i" >"$work/repo-$name/app/cm-$i.yaml"
  done
  git -C "$work/repo-$name" init -q -b main
  git -C "$work/repo-$name" add -A
  git -C "$work/repo-$name" -c user.email=bench@example.test -c user.name=bench commit -qm app
  kubectl -n "$name" create configmap argocd-cm \
    --from-literal="resource.customizations.health.ConfigMap=${scripts[$name]}" >/dev/null
  kubectl -n "$name" apply -f - >/dev/null <<APP
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: hostile, namespace: $name}
spec:
  project: default
  source: {repoURL: $work/repo-$name, path: app, targetRevision: main}
  destination: {server: https://kubernetes.default.svc, namespace: $name}
  syncPolicy: {automated: {selfHeal: true}}
APP
  local port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # Peak RSS through /usr/bin/time; the controller stops after SECONDS_RUN.
  set +e
  /usr/bin/time -f "%M" -o "$work/rss-$name" timeout -s TERM "${SECONDS_RUN:-30}" prlimit --as=3000000000 \
    "$wavecd" controller --leader-elect=false --namespace "$name" --cache-dir "$work/cache-$name" \
    --listen "127.0.0.1:$port" >"$work/controller-$name.log" 2>&1
  local code=$?
  set -e
  local health
  health=$(kubectl -n "$name" get application hostile -o jsonpath='{.status.health.status}' 2>/dev/null || true)
  printf '%-10s peak RSS %6d MiB  (exit %d, app health %s)\n' "$name" $(($(tail -1 "$work/rss-$name") / 1024)) "$code" "${health:-none}"
  kubectl -n "$name" get application hostile -o jsonpath='{.status.resources[0].health.message}' 2>/dev/null | cut -c1-200 || true
  echo
}

manifest() {
  mkdir -p "$work/one" "$work/many"
  python3 - "$work" <<'PY'
import sys
work = sys.argv[1]
with open(f"{work}/one/big.yaml", "w") as f:
    f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  v: " + "x" * 50_000_000 + "\n")
doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d\ndata:\n  v: " + "y" * 900 + "\n---\n"
with open(f"{work}/many/many.yaml", "w") as f:
    size = n = 0
    while size < 50_000_000:
        d = doc % n
        f.write(d)
        size += len(d)
        n += 1
PY
  local raised=(--limit reposerver.max.manifest.size=100M --limit reposerver.max.combined.directory.manifests.size=100M
    --limit reposerver.max.combined.manifests.size=100M)
  for dir in one many; do
    for limits in default raised; do
      local args=()
      [ "$limits" = raised ] && args=("${raised[@]}")
      set +e
      /usr/bin/time -f "%M" -o "$work/rss" "$wavecd" render --repo "$work/$dir" --path . --cache-dir "$work/cache" \
        "${args[@]}" >/dev/null 2>"$work/err"
      local code=$?
      set -e
      printf 'manifest %-4s limits %-7s peak RSS %6d MiB  (exit %d) %s\n' "$dir" "$limits" $(($(tail -1 "$work/rss") / 1024)) \
        "$code" "$(grep -m1 Error "$work/err" | cut -c1-120)"
    done
  done
}

case "$what" in
  lua-rep | lua-table) lua "$what" ;;
  manifest) manifest ;;
  all) lua lua-rep; lua lua-table; manifest ;;
  *) echo "unknown measure $what" >&2; exit 2 ;;
esac
