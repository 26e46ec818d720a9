#!/bin/sh
# Builds the Tigera operator (the github.com/tigera/operator command this
# module pins: the program Calico's tigera-operator Helm chart deploys) into
# OUT_DIR/tigera-operator. Nothing of Tigera's is kept in this repository.
#
#   localcluster/tigera/build.sh localcluster/bin
set -eu
out=${1:?usage: build.sh OUT_DIR}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")"
go=${GO:-go}
mkdir -p "$out"
# Stamp the version as the operator's own Makefile does: the operator uses it
# for the tag of its own image (init containers) and its minimum-version check,
# and prints it at start-up.
version=$("$go" list -m -f '{{.Version}}' github.com/tigera/operator)
"$go" build -o "$out/tigera-operator" \
	-ldflags "-X github.com/tigera/operator/version.VERSION=$version" \
	github.com/tigera/operator
# The version it is, which wavecd-localcluster compares with the tag of the
# image a pod runs.
echo "$version" > "$out/tigera-operator.version"
