#!/usr/bin/env bash
# make release-check: everything a release needs, without publishing anything.
#  1. goreleaser check (the config is valid for the pinned GoReleaser v2.12.7)
#  2. a snapshot release: all six binaries (CGO off), their archives and the checksums file
#  3. each binary is built for its platform with CGO off (go version -m), and the host's binary
#     reports the version and commit injected by ldflags
#  4. the krew manifest generated from those checksums passes krew's own validator, and krew
#     installs it from the local archive (which checks the archive's sha256 against the manifest)
#  5. the checked-in krew-manifest.yaml passes krew's validator
#  6. the watchdog's image, built from the snapshot's two linux binaries into an OCI layout
#     (hack/release/image; nothing is pushed), inspected: both platforms, entrypoint, non-root
#     user, labels, no files but the binary, CA certificates, passwd and group; the binaries are
#     GoReleaser's bytes, and the host's one, extracted from the image's layers, reports the
#     version and commit; docs/deploy/watchdog.yaml rendered for the snapshot pins that image;
#     crane pushes and copies it to a registry on loopback with the same digest
#  7. the watchdog's Helm chart, given the snapshot's version (a release's tag must already be in
#     Chart.yaml), packaged by hack/chart with Helm's library and read back: version X.Y.Z,
#     appVersion vX.Y.Z, and the release's image by default
#
# It builds a clone of HEAD, as a release would: what is committed, not the working tree (others'
# half-saved edits must not break it, nor hide that a file was never committed). The generated
# manifest, the checksums, the image's layout and the rendered watchdog manifest are copied to
# dist/ here.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD

goreleaser=$(hack/tools/install.sh goreleaser)
validator=$(hack/tools/install.sh validate-krew-manifest)
krew=$(hack/tools/install.sh krew)
crane=$(hack/tools/install.sh crane)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "release-check: $*" >&2; exit 1; }

git clone -q --shared "$repo" "$work/src"
cd "$work/src"
echo "release-check: building $(git log -1 --format='%h %s')"

"$goreleaser" check
# --snapshot publishes nothing; --clean starts from an empty dist/.
"$goreleaser" release --snapshot --clean

version=$(sed -n 's/.*"version":"\([^"]*\)".*/\1/p' dist/metadata.json)
[[ -n $version ]] || fail "no version in dist/metadata.json"
sums=dist/kubectl-ray_${version}_checksums.txt
(cd dist && sha256sum --quiet -c "$(basename "$sums")") || fail "$sums does not match the archives"

commit=$(git rev-parse --short HEAD)
n=0
for b in dist/kubectl-ray_*/kubectl-ray dist/kubectl-ray_*/kubectl-ray.exe; do
  [[ -f $b ]] || continue
  dir=$(basename "$(dirname "$b")")               # kubectl-ray_linux_arm64_v8.0
  read -r os arch <<<"$(echo "$dir" | awk -F_ '{print $2, $3}')"
  info=$(go version -m "$b")
  grep -q "GOOS=$os\$" <<<"$info" && grep -q "GOARCH=$arch\$" <<<"$info" && grep -q "CGO_ENABLED=0\$" <<<"$info" \
    || fail "$b is not a CGO-off $os/$arch build: $info"
  # -trimpath keeps -ldflags out of the build info, so look for the injected string itself; the
  # host's binary below is also run.
  grep -aqF "v$version" "$b" || fail "$b does not carry version v$version (ldflags)"
  ext=tar.gz; [[ $os == windows ]] && ext=zip
  grep -q "  kubectl-ray_${version}_${os}_${arch}.$ext\$" "$sums" || fail "no archive for $os/$arch in $sums"
  n=$((n + 1))
done
[[ $n == 6 ]] || fail "want 6 binaries (linux, darwin, windows x amd64, arm64), found $n"

host_os=$(go env GOOS) host_arch=$(go env GOARCH)
host_dir=$(ls -d dist/kubectl-ray_"${host_os}"_"${host_arch}"_* | head -1)
got=$("$host_dir/kubectl-ray" version --client)
want="Client Version: v$version"
[[ $got == "$want" ]] || fail "the $host_os/$host_arch binary says '$got', want '$want'"
got=$("$host_dir/kubectl-ray" version --client -o json)
grep -q "\"commit\": *\"$commit\"" <<<"$got" || fail "the binary does not carry commit $commit: $got"
echo "release-check: 6 binaries, archives and checksums for $version ($commit)"

# The manifest from this snapshot's checksums; krew's validator wants the file named after the plugin.
mkdir -p "$work/gen" "$work/checked-in"
go run ./hack/release/krewmanifest -version "v$version" -checksums "$sums" >"$work/gen/ray-ops.yaml"
validate() { # validate FILE: krew's validator, its stack trace left out when it fails
  local out
  out=$("$validator" -manifest "$1" -skip-install 2>&1) || { grep -v '^\s' <<<"$out" >&2; return 1; }
}
validate "$work/gen/ray-ops.yaml" || fail "krew rejects the generated manifest"
# The validator's own install step downloads each uri; here the release is not published, so krew
# installs from the local archive instead, which checks the sha256 just the same.
ext=tar.gz; [[ $host_os == windows ]] && ext=zip
KREW_ROOT=$work/krew KREW_NO_UPGRADE_CHECK=1 KREW_OS=$host_os KREW_ARCH=$host_arch \
  "$krew" install --manifest="$work/gen/ray-ops.yaml" --archive="dist/kubectl-ray_${version}_${host_os}_${host_arch}.$ext" \
  || fail "krew could not install the generated manifest from the local archive"
got=$("$work/krew/bin/kubectl-ray_ops" version --client)
[[ $got == "$want" ]] || fail "krew's kubectl-ray_ops says '$got', want '$want'"
echo "release-check: krew validates the generated manifest and installs it from the archive as kubectl-ray_ops"
mkdir -p "$repo/dist"
cp "$work/gen/ray-ops.yaml" "$sums" "$repo/dist/"

cp krew-manifest.yaml "$work/checked-in/ray-ops.yaml"
validate "$work/checked-in/ray-ops.yaml" || fail "krew rejects krew-manifest.yaml"
echo "release-check: krew-manifest.yaml is valid by krew's validator"

# The image (docs/deploy/README.md): one build of the tool, then build, render and verify.
go build -o "$work/image" ./hack/release/image
built=$("$work/image" build -dist dist -out dist/image) || fail "could not build the watchdog's image"
echo "release-check: $built"
digest=${built##*@}; digest=${digest%% *}
"$work/image" render -version "v$version" -layout dist/image <docs/deploy/watchdog.yaml >"$work/watchdog.yaml"
"$work/image" verify -layout dist/image -version "v$version" -commit "$commit" -dist dist \
  -manifest "$work/watchdog.yaml" -pinned | sed 's/^/release-check: /' || fail "the watchdog's image or its manifest is wrong"

# Push and retag it with crane as docs/deploy/README.md tells a user to, into a registry on
# loopback standing in for theirs: the registry must report the layout's digest.
"$crane" registry serve --address 127.0.0.1:0 2>"$work/registry.log" &
registry=$!
trap 'kill "$registry" 2>/dev/null || true; rm -rf "$work"' EXIT
port=
for _ in $(seq 100); do
  port=$(sed -n 's/.*serving on port \([0-9]*\).*/\1/p' "$work/registry.log")
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || fail "crane registry serve did not start: $(cat "$work/registry.log")"
ref=127.0.0.1:$port/platform/kubectl-ray:v$version
"$crane" push dist/image "$ref" >/dev/null 2>"$work/crane.log" || fail "crane push: $(cat "$work/crane.log")"
"$crane" copy "$ref" "127.0.0.1:$port/mirror/kubectl-ray:v$version" 2>"$work/crane.log" || fail "crane copy: $(cat "$work/crane.log")"
for r in "$ref" "127.0.0.1:$port/mirror/kubectl-ray:v$version"; do
  got=$("$crane" digest "$r")
  [[ $got == "$digest" ]] || fail "$r has digest $got, the layout $digest"
done
for p in linux/amd64 linux/arm64; do
  cfg=$("$crane" config --platform "$p" "$ref")
  grep -q "\"architecture\":\"${p#linux/}\"" <<<"$cfg" || fail "the pushed image has no $p config: $cfg"
done
kill "$registry"
echo "release-check: crane push and crane copy to a loopback registry keep the digest $digest (both platforms)"

# The chart (docs/deploy/README.md): on a tag, Chart.yaml must already carry the release's version
# (make watchdog-manifest VERSION=vX.Y.Z); a snapshot's is set here, in the clone.
if git describe --exact-match --tags HEAD >/dev/null 2>&1; then
  tag=$(git describe --exact-match --tags HEAD)
  [[ $tag == "v$version" ]] || fail "tag $tag, GoReleaser's version $version"
else
  (cd hack/chart && go run . version "v$version") || fail "could not set the chart's version"
fi
chart=$(cd hack/chart && go run . package "v$version" "$work/src/dist") || fail "the watchdog's chart does not package for v$version"
echo "release-check: chart $(basename "$chart"): version $version, appVersion and default image tag v$version"

rm -rf "$repo/dist/image"
cp -r dist/image "$repo/dist/image"
cp "$chart" "$repo/dist/"
cp "$work/watchdog.yaml" "$repo/dist/watchdog.yaml"
