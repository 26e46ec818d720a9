#!/bin/sh
# Builds karpenter-kwok (cmd/karpenter-kwok: Karpenter's KWOK provider,
# sigs.k8s.io/karpenter/kwok, which also serves EC2NodeClasses) into
# OUT_DIR/karpenter-kwok and copies the CRDs the KWOK provider needs from
# the module cache into OUT_DIR/karpenter-crds/. Nothing of Karpenter is
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
"$go" build -o "$out/karpenter-kwok" ./cmd/karpenter-kwok
# The version it stands for, which wavecd-localcluster compares with the
# tag of the image a pod runs.
"$go" list -m -f '{{.Version}}' sigs.k8s.io/karpenter > "$out/karpenter-kwok.version"
src=$("$go" list -m -f '{{.Dir}}' sigs.k8s.io/karpenter)
rm -f "$out"/karpenter-crds/*.yaml
cp "$src"/kwok/charts/crds/*.yaml "$src"/kwok/apis/crds/*.yaml "$out/karpenter-crds/"
chmod u+w "$out"/karpenter-crds/*.yaml # the module cache is read-only
