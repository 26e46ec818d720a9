#!/bin/sh
# Builds Gitea (code.gitea.io/gitea, the version this module pins as a
# tool) into OUT_DIR/gitea, and copies the templates and options (locales,
# licences) it reads at start into OUT_DIR/gitea-static/, for the tests of
# the SCM provider and pull request generators, which run the real server
# on 127.0.0.1. Nothing of Gitea's is kept in this repository. SQLite is
# mattn/go-sqlite3, as Gitea's releases build it: cgo and a C compiler.
#
#   test/gitea/build.sh bin
set -eu
out=${1:?usage: build.sh OUT_DIR}
case $out in /*) ;; *) out=$PWD/$out ;; esac
cd "$(dirname "$0")"
go=${GO:-go}
mkdir -p "$out"
version=$("$go" list -m -f '{{.Version}}' code.gitea.io/gitea)
# Stamp the version as Gitea's Makefile does: the API reports it, and
# Gitea's client library picks the calls it makes by it.
CGO_ENABLED=1 "$go" build -o "$out/gitea" -tags 'sqlite sqlite_unlock_notify' \
	-ldflags "-X main.Version=${version#v} -X 'main.Tags=sqlite sqlite_unlock_notify'" \
	code.gitea.io/gitea
src=$("$go" list -m -f '{{.Dir}}' code.gitea.io/gitea)
rm -rf "$out/gitea-static"
mkdir -p "$out/gitea-static"
cp -R "$src/templates" "$src/options" "$out/gitea-static/"
chmod -R u+w "$out/gitea-static" # the module cache is read-only
