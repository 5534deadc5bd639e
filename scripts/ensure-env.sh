#!/usr/bin/env bash
# Brings a fresh machine of this kind (Debian, root, npm registry + Debian mirrors reachable) to what the
# project needs: npm packages (which include Node 22 as the `node` dev dependency) and, with `--tests`, Chromium
# (headless, for the HTML report tests) and the Kubernetes binaries built from pinned Go modules (scripts/kube-bins.sh:
# kubectl, kube-apiserver, kube-controller-manager, kube-scheduler, etcd, etcdctl).
# Idempotent and quick when everything is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
# Headless Chromium renders the audit's HTML fleet report in its tests (test/core/audit,
# test/functions/audit); only `--tests` needs it.
if [ "${1:-}" = "--tests" ]; then
  [ -x /usr/bin/chromium ] || need_apt+=(chromium)
  # yurt-manager runs in a network namespace of its own in the tests (dev/local/openyurt/loopback-netns.ts).
  { [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || [ -x /usr/bin/ip ]; } || need_apt+=(iproute2)
  { [ -x /usr/bin/unshare ] && [ -x /usr/bin/nsenter ] && [ -x /usr/bin/setpriv ]; } || need_apt+=(util-linux)
  # The real node (dev/local/kubelet/real): the built kubelet on Debian's containerd, runc and CNI plugins.
  { [ -x /usr/bin/containerd ] && [ -x /usr/sbin/runc ] && [ -x /usr/lib/cni/bridge ]; } || need_apt+=(containerd runc containernetworking-plugins)
fi
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-env: missing ${need_apt[*]}; install them with: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "ensure-env: installing ${need_apt[*]} (Debian packages)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# Reinstall npm packages when node_modules is missing or older than the lock file.
if [ ! -x node_modules/.bin/node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "ensure-env: installing npm packages (npm ci)" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

# The tests judge the product with the real kubectl, kube-apiserver and etcd, built from pinned Go modules under
# tools/ into .cache/kube-bins. Only the tests need them: `npm start` (the embedded local API) never builds Go.
if [ "${1:-}" = "--tests" ]; then
  bash scripts/kube-bins.sh >&2
  bash scripts/images.sh >&2  # the images, multi-arch and signed (docs/images.md)
  # AWS's own judges of the cloud half (docs/aws-stand-ins.md): cfn-lint and moto (Python), event-ruler (Java),
  # the Lambda Runtime Interface Emulator and runtime interface client.
  bash scripts/python-judges.sh
  bash scripts/event-ruler.sh
  bash scripts/lambda-rie.sh
fi
