#!/usr/bin/env bash
# Lint the Dockerfile with hadolint: from PATH, from bin/hadolint, through
# its image when docker or podman can run one, or from its release binary
# downloaded into bin/ (checked against the published SHA-256) when the
# release host is reachable. Fails saying so when none of these works.
# Usage: deploy/lint-image.sh   (make lint-image runs it)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
version=${HADOLINT_VERSION:-v2.12.0}
dockerfile=$root/Dockerfile

if command -v hadolint >/dev/null; then
	exec hadolint "$dockerfile"
fi
if [[ -x $root/bin/hadolint ]]; then
	exec "$root/bin/hadolint" "$dockerfile"
fi
for runner in docker podman; do
	if command -v "$runner" >/dev/null && "$runner" info >/dev/null 2>&1; then
		exec "$runner" run --rm -i "docker.io/hadolint/hadolint:$version" hadolint - <"$dockerfile"
	fi
done

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) asset=hadolint-Linux-x86_64 ;;
Linux-aarch64) asset=hadolint-Linux-arm64 ;;
Darwin-x86_64) asset=hadolint-Darwin-x86_64 ;;
*) asset="" ;;
esac
url=https://github.com/hadolint/hadolint/releases/download/$version/$asset
mkdir -p "$root/bin"
if [[ -n $asset ]] && curl -fsSL --max-time 20 -o "$root/bin/hadolint.download" "$url" 2>/dev/null &&
	curl -fsSL --max-time 20 -o "$root/bin/hadolint.sha256" "$url.sha256" 2>/dev/null; then
	want=$(awk '{print $1}' "$root/bin/hadolint.sha256")
	got=$(sha256sum "$root/bin/hadolint.download" | awk '{print $1}')
	rm -f "$root/bin/hadolint.sha256"
	if [[ $want != "$got" ]]; then
		rm -f "$root/bin/hadolint.download"
		echo "make lint-image: the downloaded hadolint does not match its published SHA-256" >&2
		exit 1
	fi
	chmod +x "$root/bin/hadolint.download"
	mv "$root/bin/hadolint.download" "$root/bin/hadolint"
	exec "$root/bin/hadolint" "$dockerfile"
fi
rm -f "$root/bin/hadolint.download" "$root/bin/hadolint.sha256"
cat >&2 <<MSG
make lint-image: hadolint is not available: it is not on PATH nor in bin/,
no docker or podman daemon can run its image, and its release binary
($url) cannot be downloaded from here.
Install hadolint $version (https://github.com/hadolint/hadolint/releases) on
PATH or as bin/hadolint, then run make lint-image again.
MSG
exit 1
