#!/usr/bin/env bash
# Installs kubectl-ray into PREFIX so that `kubectl ray doctor|heal|chaos|bundle` work whether or not
# KubeRay's own kubectl-ray plugin is installed (`make install` runs this).
#
#   hack/release/install.sh BINARY PREFIX
#
# kubectl resolves `kubectl ray doctor` to an executable kubectl-ray-doctor before it falls back to
# kubectl-ray, and the binary acts as the subcommand it is named after. So:
#   PREFIX/kubectl-ray_ops                 the binary (`kubectl ray-ops`, the name krew gives it too)
#   PREFIX/kubectl-ray-{doctor,heal,chaos,bundle}  links: `kubectl ray doctor` reaches ours in any layout
#   PREFIX/kubectl_complete-ray_ops, kubectl_complete-ray-{doctor,heal,chaos,bundle}
#                                           links: kubectl's plugin completion hooks (kubectl >= 1.26)
#   PREFIX/kubectl-ray, kubectl_complete-ray
#                                           links, only when no other kubectl-ray is on PATH or in
#                                           PREFIX: a kubectl-ray that is not ours (KubeRay's) is
#                                           never overwritten, and ours is removed again if one
#                                           appears, so `kubectl ray get` keeps reaching KubeRay's.
# Links are relative symlinks to kubectl-ray_ops; a file that is not such a link is never replaced.
set -euo pipefail

bin=${1:?usage: $0 BINARY PREFIX}
prefix=${2:?usage: $0 BINARY PREFIX}
main=kubectl-ray_ops
subs=(doctor heal chaos bundle)

[[ -x $bin ]] || { echo "install: $bin is not an executable; run make build first" >&2; exit 1; }
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd -P)

# The binary itself: written beside, then renamed, so a running copy is never half-written.
tmp=$(mktemp "$prefix/.$main.XXXXXX")
cp "$bin" "$tmp"
chmod 0755 "$tmp"
mv -f "$tmp" "$prefix/$main"
echo "installed $prefix/$main"

ours() { [[ -L $1 && $(readlink "$1") == "$main" ]]; }

# link NAME: make PREFIX/NAME a link to the binary unless something else is there.
link() {
  local f=$prefix/$1
  if [[ -e $f || -L $f ]] && ! ours "$f"; then
    echo "left alone: $f is not ours (not a link to $main)" >&2
    return 1
  fi
  ln -sfn "$main" "$f"
  echo "linked    $f -> $main"
}

for s in "${subs[@]}"; do
  link "kubectl-ray-$s" || true
  link "kubectl_complete-ray-$s" || true
done
link kubectl_complete-ray_ops || true

# kubectl-ray: KubeRay's plugin has the same name. Find one that is not ours.
other=""
if [[ -e $prefix/kubectl-ray || -L $prefix/kubectl-ray ]] && ! ours "$prefix/kubectl-ray"; then
  other=$prefix/kubectl-ray
else
  IFS=: read -r -a dirs <<<"${PATH:-}"
  for d in "${dirs[@]}"; do
    [[ -n $d && -d $d ]] || continue
    [[ $(cd "$d" && pwd -P) == "$prefix" ]] && continue
    if [[ -x $d/kubectl-ray ]]; then other=$d/kubectl-ray; break; fi
  done
fi
if [[ -z $other ]]; then
  link kubectl-ray
  link kubectl_complete-ray || true
  echo "kubectl ray ... runs this plugin"
else
  for f in kubectl-ray kubectl_complete-ray; do
    if ours "$prefix/$f"; then rm -f "$prefix/$f"; echo "removed   $prefix/$f (another kubectl-ray is installed)"; fi
  done
  echo "kubectl ray doctor|heal|chaos|bundle run this plugin; other kubectl ray commands run $other (KubeRay's, left alone)"
  echo "the rest of this plugin (version, completion): kubectl ray-ops ..."
fi

case ":${PATH:-}:" in
  *":$prefix:"*) ;;
  *) echo "note: $prefix is not on PATH; add it so kubectl finds the plugin" >&2 ;;
esac
