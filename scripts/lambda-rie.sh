#!/usr/bin/env bash
# AWS's own Lambda runtime code for the tests (test/e2e/aws/lambda-rie.e2e.test.ts) and `spiritctl local up
# --lambda rie`: the Runtime Interface Emulator (RIE), built from the Go module pinned in tools/lambda-rie/go.mod,
# and the Node.js runtime interface client (npm aws-lambda-ric, pinned by tools/lambda-rie/package-lock.json),
# whose native part is compiled against the headers of the project's Node 22. Both land in the git-ignored
# .cache/lambda-rie/; nothing here becomes a dependency of the shipped functions.
# Idempotent: quick when both are there and their pins have not changed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/.cache/lambda-rie
PIN=$ROOT/tools/lambda-rie
NODE=$ROOT/node_modules/.bin/node
mkdir -p "$OUT/bin"

# The emulator: rebuilt when the pinned module set changes.
rie_stamp=$(cat "$PIN/go.mod" "$PIN/go.sum" | sha256sum | cut -c1-16)
if [ ! -x "$OUT/bin/aws-lambda-rie" ] || [ "$(cat "$OUT/rie.stamp" 2>/dev/null)" != "$rie_stamp" ]; then
  command -v go >/dev/null || {
    echo "lambda-rie: Go is missing (>= 1.26, with the module proxy): https://go.dev/doc/install" >&2
    exit 1
  }
  echo "lambda-rie: building the Lambda Runtime Interface Emulator (Go, tools/lambda-rie/go.mod)" >&2
  (cd "$PIN" && go build -trimpath -o "$OUT/bin/aws-lambda-rie" \
    github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie)
  echo "$rie_stamp" >"$OUT/rie.stamp"
fi

# The runtime interface client: reinstalled when its lock changes. Its install builds curl and aws-lambda-cpp
# from the sources in its package (cmake, make, a C++ compiler) and a Node addon (node-gyp, python3).
ric_stamp=$(cat "$PIN/package.json" "$PIN/package-lock.json" | sha256sum | cut -c1-16)
RIC=$OUT/ric
if [ -f "$RIC/node_modules/aws-lambda-ric/rapid-client.node" ] && [ "$(cat "$OUT/ric.stamp" 2>/dev/null)" = "$ric_stamp" ]; then
  exit 0
fi

need_apt=()
command -v cmake >/dev/null || need_apt+=(cmake)
command -v make >/dev/null || need_apt+=(make)
command -v g++ >/dev/null || need_apt+=(g++)
command -v python3 >/dev/null || need_apt+=(python3)
command -v xz >/dev/null || need_apt+=(xz-utils)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "lambda-rie: the runtime interface client's native build needs ${need_apt[*]}; install them with: sudo apt-get install -y ${need_apt[*]}" >&2
    exit 1
  fi
  echo "lambda-rie: installing ${need_apt[*]} (Debian packages)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# node-gyp compiles against the headers of the Node that will load the addon. nodejs.org (where node-gyp
# fetches them) may be unreachable; the `node` npm package's platform package ships them, so they come from
# there (or, when npm has pruned that package, from the same package fetched with `npm pack`).
node_version=$("$NODE" --version)
headers=$OUT/node-headers-$node_version
if [ ! -f "$headers/include/node/common.gypi" ]; then
  platform_pkg=node-$("$NODE" -p 'process.platform + "-" + process.arch')
  shipped=$ROOT/node_modules/node/node_modules/$platform_pkg
  rm -rf "$headers.tmp" && mkdir -p "$headers.tmp"
  if [ -f "$shipped/include/node/common.gypi" ] && [ "$("$NODE" -p "require('$shipped/package.json').version")" = "${node_version#v}" ]; then
    cp -r "$shipped/include" "$headers.tmp/"
  else
    echo "lambda-rie: fetching Node ${node_version} headers ($platform_pkg@${node_version#v} from the npm registry)" >&2
    tarball=$(cd "$headers.tmp" && npm pack --silent "$platform_pkg@${node_version#v}")
    tar xzf "$headers.tmp/$tarball" -C "$headers.tmp" package/include
    mv "$headers.tmp/package/include" "$headers.tmp/include"
    rm -rf "$headers.tmp/package" "$headers.tmp/$tarball"
  fi
  rm -rf "$headers" && mv "$headers.tmp" "$headers"
fi

echo "lambda-rie: installing the Node.js runtime interface client (aws-lambda-ric, native build)" >&2
rm -rf "$RIC" && mkdir -p "$RIC"
cp "$PIN/package.json" "$PIN/package-lock.json" "$RIC/"
(
  cd "$RIC"
  PATH=$ROOT/node_modules/.bin:$PATH npm_config_nodedir=$headers npm ci --no-audit --no-fund --loglevel=error >&2
)
[ -f "$RIC/node_modules/aws-lambda-ric/rapid-client.node" ] || {
  echo "lambda-rie: aws-lambda-ric installed without its native client (rapid-client.node)" >&2
  exit 1
}
echo "$ric_stamp" >"$OUT/ric.stamp"
