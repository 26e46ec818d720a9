#!/usr/bin/env bash
# Build the wavecd image from the repository's Dockerfile with the first
# working builder: docker (with a reachable daemon), podman, or buildah.
# Usage: deploy/build-image.sh IMAGE VERSION COMMIT   (make image runs it)
# IMAGE_BUILDER=docker|podman|buildah picks one.
set -euo pipefail

image=${1:?usage: build-image.sh IMAGE VERSION COMMIT}
version=${2:?usage: build-image.sh IMAGE VERSION COMMIT}
commit=${3:?usage: build-image.sh IMAGE VERSION COMMIT}
root=$(cd "$(dirname "$0")/.." && pwd)

usable() {
	case $1 in
	docker) command -v docker >/dev/null && docker info >/dev/null 2>&1 ;;
	*) command -v "$1" >/dev/null ;;
	esac
}

builder=${IMAGE_BUILDER:-}
if [[ -z $builder ]]; then
	for b in docker podman buildah; do
		if usable "$b"; then builder=$b; break; fi
	done
fi
if [[ -z $builder ]]; then
	echo "make image: no image builder found: install docker (with a running daemon), podman or buildah" >&2
	if command -v docker >/dev/null; then
		echo "  (docker is installed, but its daemon does not answer: docker info fails)" >&2
	fi
	exit 1
fi

args=(--file "$root/Dockerfile" --tag "$image" --build-arg "VERSION=$version" --build-arg "COMMIT=$commit")
echo "building $image with $builder"
case $builder in
docker) DOCKER_BUILDKIT=1 docker build "${args[@]}" "$root" ;;
podman) podman build --layers "${args[@]}" "$root" ;;
buildah) buildah build --layers "${args[@]}" "$root" ;;
*) echo "make image: unknown IMAGE_BUILDER $builder (docker, podman or buildah)" >&2; exit 1 ;;
esac
