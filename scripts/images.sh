#!/usr/bin/env bash
# `npm run images`: builds the product's OCI images into .cache/images (scripts/images.ts, docs/images.md).
# Brings what the build needs from Debian first when it is missing: gcc and the arm64 cross gcc (upstream's
# pause.c), and qemu-user-static (the tests run the arm64 binaries). Arguments go to scripts/images.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

need_apt=()
[ -x /usr/bin/gcc ] || need_apt+=(gcc libc6-dev)
[ -x /usr/bin/aarch64-linux-gnu-gcc ] || need_apt+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
[ -x /usr/bin/qemu-aarch64-static ] || need_apt+=(qemu-user-static)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "images: missing ${need_apt[*]}; install them with: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "images: installing ${need_apt[*]} (Debian packages)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! command -v go >/dev/null 2>&1; then
  echo "images: Go is not on PATH; the image builder, cosign and the kube binaries are built from tools/. Install Go ≥ 1.26 and retry: npm run images" >&2
  exit 1
fi
exec node scripts/images.ts "$@"
