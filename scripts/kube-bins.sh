#!/usr/bin/env bash
# Builds the pinned Kubernetes binaries the tests judge the product with, from the Go modules under tools/,
# into a git-ignored cache (.cache/kube-bins/bin), and prints where each one is. Idempotent: a binary is
# rebuilt only when its module (go.mod, go.sum, main.go) or this script changed since it was built.
#   bash scripts/kube-bins.sh            # build what is missing, print NAME=PATH lines
#   bash scripts/kube-bins.sh --print    # print the paths only; exit 1 if any is missing
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out="$root/.cache/kube-bins/bin"
stamps="$root/.cache/kube-bins/stamps"
# KUBE_BINS_GOARCH=arm64 cross-builds into .cache/kube-bins/linux-arm64/ instead (the images' second platform,
# scripts/images.ts); KUBE_BINS_ONLY="name …" limits a run to those targets.
arch=${KUBE_BINS_GOARCH:-}
if [ -n "$arch" ]; then out="$root/.cache/kube-bins/linux-$arch/bin"; stamps="$root/.cache/kube-bins/linux-$arch/stamps"; fi
mkdir -p "$out" "$stamps"

# name | module dir | package | release stamped into the version variables ('' = none, etcd = its own)
targets=(
  "kubectl|tools/kubectl|.|v1.36.3"
  "kube-apiserver|tools/kube|k8s.io/kubernetes/cmd/kube-apiserver|v1.36.3"
  "kube-controller-manager|tools/kube|k8s.io/kubernetes/cmd/kube-controller-manager|v1.36.3"
  "kube-scheduler|tools/kube|k8s.io/kubernetes/cmd/kube-scheduler|v1.36.3"
  # The real node's kubelet (dev/local/kubelet/real): the control plane's release, so the version skew policy holds.
  "kubelet|tools/kube|k8s.io/kubernetes/cmd/kubelet|v1.36.3"
  # The next bundle's apiserver: a rollout in the tests upgrades v1.36.3 to it.
  "kube-apiserver-v1.37.2|tools/kube-next|k8s.io/kubernetes/cmd/kube-apiserver|v1.37.2"
  "etcd|tools/etcd|go.etcd.io/etcd/server/v3|etcd"
  "etcdctl|tools/etcd|go.etcd.io/etcd/etcdctl/v3|etcd"
  # The local API's protobuf pointer-field table, read from the same release's Go types (test/dev/local/kube-api/protobuf).
  "pointer-fields|tools/kubectl|./cmd/pointer-fields|"
  # A real YurtHub (OpenYurt v1.5.1, the newest release the module proxy serves with coordinator support).
  "yurthub|tools/yurthub|github.com/openyurtio/openyurt/cmd/yurthub|openyurt-v1.5.1"
  # OpenYurt v1.5.1's yurt-manager from the same module: its webhooks and controllers beside the product (dev/local/openyurt).
  "yurt-manager|tools/yurthub|github.com/openyurtio/openyurt/cmd/yurt-manager|openyurt-v1.5.1"
  # OpenYurt v1.7.0's yurt-manager (NodePool v1beta2 stored, its conversion webhook): the local stack's `--openyurt v1.7.0`.
  "yurt-manager-v1.7.0|tools/openyurt-v1.7|github.com/openyurtio/openyurt/cmd/yurt-manager|openyurt-v1.7.0"
)

ldflags_for() {
  local release=$1
  [ -n "$release" ] || return 0
  # etcd's version is a constant of its api module; only the commit is left to stamp.
  if [ "$release" = etcd ]; then echo "-X go.etcd.io/etcd/api/v3/version.GitSHA=module-build"; return 0; fi
  # OpenYurt stamps its own projectinfo package (hack/lib/common.sh); the commit is the release tag's.
  # The module proxy names no commit for v1.5.1; its date is the module's.
  if [ "$release" = openyurt-v1.5.1 ]; then
    local p=github.com/openyurtio/openyurt/pkg/projectinfo
    echo "-X $p.gitVersion=v1.5.1 -X $p.buildDate=2025-01-04T13:16:21Z"
    return 0
  fi
  # v1.7.0's commit and date are the module proxy's (`go mod download -json`: Origin.Hash, Time).
  if [ "$release" = openyurt-v1.7.0 ]; then
    local p=github.com/openyurtio/openyurt/pkg/projectinfo
    echo "-X $p.gitVersion=v1.7.0 -X $p.gitCommit=35ef4cd692e387d0d56c9084e3da161bad2a3092 -X $p.buildDate=2026-05-06T06:27:20Z"
    return 0
  fi
  local minor=${release#v1.}; minor=${minor%%.*}
  local date; date=$(git log -1 --format=%cI -- tools 2>/dev/null || echo 1970-01-01T00:00:00Z)
  local v
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    v+=" -X $pkg.gitVersion=$release -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  echo "$v"
}

fingerprint() {
  local dir=$1 release=$2
  { cat "$dir/go.mod" "$dir/go.sum"; find "$dir" -name '*.go' | sort | xargs cat; ldflags_for "$release" | sed 's/buildDate=[^ ]*//g'; go env GOVERSION; } | sha256sum | cut -c1-16
}

print_only=false
[ "${1:-}" = "--print" ] && print_only=true
missing=0
for t in "${targets[@]}"; do
  IFS='|' read -r name dir pkg release <<<"$t"
  case " ${KUBE_BINS_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
  bin="$out/$name"
  want=$(fingerprint "$dir" "$release")
  if [ -x "$bin" ] && [ "$(cat "$stamps/$name" 2>/dev/null)" = "$want" ]; then
    echo "$name=$bin"
    continue
  fi
  if $print_only; then
    echo "kube-bins: $name is not built; run: npm run kube-bins" >&2
    missing=1
    continue
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "kube-bins: Go is not on PATH; $name is built from the Go module $dir. Install Go ≥ 1.26 and retry: npm run kube-bins" >&2
    exit 1
  fi
  shown=$release; [ "$shown" = etcd ] && shown=''
  echo "kube-bins: building $name${shown:+ $shown} from $dir (module $(awk '$1 == "module" { print $2 }' "$dir/go.mod"), package $pkg)" >&2
  start=$(date +%s)
  log=$(mktemp)
  if ! (cd "$dir" && export GOARCH="${arch:-$(go env GOARCH)}" && CGO_ENABLED=0 GOFLAGS=-mod=readonly GOTOOLCHAIN=local \
        go build -trimpath -ldflags "$(ldflags_for "$release")" -o "$bin.tmp" "$pkg") >"$log" 2>&1; then
    echo "kube-bins: building $name failed in module $dir (go build $pkg); the last lines of its output:" >&2
    tail -20 "$log" >&2
    echo "kube-bins: fix the cause above (a module download needs the Go module proxy), then retry: npm run kube-bins" >&2
    rm -f "$log" "$bin.tmp"
    exit 1
  fi
  rm -f "$log"
  mv "$bin.tmp" "$bin"
  echo "$want" >"$stamps/$name"
  echo "kube-bins: built $name in $(( $(date +%s) - start )) s" >&2
  echo "$name=$bin"
done

[ -z "$arch" ] || exit $missing

# OpenYurt's own CRDs (charts/yurt-manager/crds) per release, read from the pinned module, never copied into the
# repo: the local stack's `--openyurt RELEASE` installs them in place of infra/crds/nodepool.yaml. The chart's
# templates and values.yaml go beside them (templates/, values.yaml): dev/local/openyurt renders the RBAC and
# webhook configurations yurt-manager needs from them.
# release | module dir pinning github.com/openyurtio/openyurt at that release
openyurt_crds=(
  "v1.5.1|tools/yurthub"
  "v1.7.0|tools/openyurt-v1.7"
)
for c in "${openyurt_crds[@]}"; do
  IFS='|' read -r release dir <<<"$c"
  base="$root/.cache/kube-bins/openyurt/$release"
  dest="$base/crds"
  if [ -f "$dest/apps.openyurt.io_nodepools.yaml" ] && [ -f "$base/templates/yurt-manager.yaml" ] && [ -f "$base/values.yaml" ]; then
    echo "openyurt-crds-$release=$dest"
    continue
  fi
  if $print_only; then
    echo "kube-bins: OpenYurt $release's CRDs and chart templates are not here; run: npm run kube-bins" >&2
    missing=1
    continue
  fi
  if ! info=$(cd "$dir" && GOFLAGS=-mod=readonly GOTOOLCHAIN=local go mod download -json github.com/openyurtio/openyurt 2>&1); then
    echo "kube-bins: downloading github.com/openyurtio/openyurt $release (module $dir) failed:" >&2
    echo "$info" | tail -5 >&2
    echo "kube-bins: it needs the Go module proxy; retry: npm run kube-bins" >&2
    exit 1
  fi
  version=$(echo "$info" | sed -n 's/^[[:space:]]*"Version": "\(.*\)",$/\1/p')
  moddir=$(echo "$info" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  chart="$moddir/charts/yurt-manager"
  if [ "$version" != "$release" ] || [ ! -d "$chart/crds" ] || [ ! -d "$chart/templates" ] || [ ! -f "$chart/values.yaml" ]; then
    echo "kube-bins: $dir pins github.com/openyurtio/openyurt $version, expected $release with charts/yurt-manager/{crds,templates,values.yaml}" >&2
    exit 1
  fi
  rm -rf "$base.tmp" && mkdir -p "$base.tmp/crds" "$base.tmp/templates"
  cp "$chart"/crds/*.yaml "$base.tmp/crds/"
  cp "$chart"/templates/* "$base.tmp/templates/"
  cp "$chart/values.yaml" "$base.tmp/values.yaml"
  chmod -R u+w "$base.tmp"
  rm -rf "$base" && mv "$base.tmp" "$base"
  echo "kube-bins: OpenYurt $release's CRDs and chart templates from the module into $base" >&2
  echo "openyurt-crds-$release=$dest"
done
exit $missing
