#!/bin/sh
# Builds Karpenter's KWOK provider (the sigs.k8s.io/karpenter/kwok command
# this module pins) into OUT_DIR/karpenter-kwok and copies the CRDs it needs
# from the module cache into OUT_DIR/karpenter-crds/. Nothing of Karpenter is
# kept in this repository.
#
#   localcluster/karpenter/build.sh localcluster/bin
set -eu
out=${1:?usage: build.sh OUT_DIR}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")"
# go.mod asks for a newer Go than may be installed: let the go command
# fetch that toolchain from the module proxy.
export GOTOOLCHAIN=auto
go=${GO:-go}
mkdir -p "$out/karpenter-crds"
"$go" build -o "$out/karpenter-kwok" sigs.k8s.io/karpenter/kwok
src=$("$go" list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
rm -f "$out"/karpenter-crds/*.yaml
cp "$src"/kwok/charts/crds/*.yaml "$src"/kwok/apis/crds/*.yaml "$out/karpenter-crds/"
chmod u+w "$out"/karpenter-crds/*.yaml # the module cache is read-only
