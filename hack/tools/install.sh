#!/usr/bin/env bash
# Installs a pinned tool from the Go module proxy into ~/.cache/kubectl-ray/tools/<name>-<version>/
# and prints the binary's path. Idempotent: an installed tool is not rebuilt. The install goes to a
# temporary directory first and is moved into place, so an interrupted build never looks installed.
#
#   hack/tools/install.sh goreleaser              # -> .../goreleaser-v2.12.7/goreleaser
#   hack/tools/install.sh validate-krew-manifest  # -> .../validate-krew-manifest-v0.4.3/validate-krew-manifest
#   hack/tools/install.sh krew                    # -> .../krew-v0.4.3/krew
#   hack/tools/install.sh crane                   # -> .../crane-v0.20.6/crane
#
# KUBECTL_RAY_TOOLS overrides the cache directory.
set -euo pipefail

name=${1:?usage: $0 goreleaser|validate-krew-manifest|krew|crane}
case "$name" in
  # v2.12.7 is the last GoReleaser that builds with Go 1.26; newer ones ask for Go 1.27.
  goreleaser)             version=v2.12.7; module=github.com/goreleaser/goreleaser/v2 ;;
  validate-krew-manifest) version=v0.4.3;  module=sigs.k8s.io/krew/cmd/validate-krew-manifest ;;
  # krew itself: release-check installs the manifest from the local archive, which checks its sha256.
  krew)                   version=v0.4.3;  module=sigs.k8s.io/krew/cmd/krew ;;
  # crane: release-check pushes the watchdog's image to a registry on loopback, as
  # docs/deploy/README.md tells a user to push it to theirs. The version of go.mod's
  # go-containerregistry, which builds the image.
  crane)                  version=v0.20.6; module=github.com/google/go-containerregistry/cmd/crane ;;
  *) echo "unknown tool $name: use goreleaser, validate-krew-manifest, krew or crane" >&2; exit 2 ;;
esac

root=${KUBECTL_RAY_TOOLS:-$HOME/.cache/kubectl-ray/tools}
dir=$root/$name-$version
bin=$dir/$name
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$root"
tmp=$(mktemp -d "$root/.$name-$version.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "installing $module@$version (once; cached in $dir)" >&2
GOBIN=$tmp CGO_ENABLED=0 go install "$module@$version"
mkdir -p "$dir"
mv -f "$tmp/$name" "$bin"
echo "$bin"
