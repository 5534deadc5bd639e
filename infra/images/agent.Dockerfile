# syntax=docker/dockerfile:1
#
# The images are built by `npm run images` (scripts/images.ts, tools/images; docs/images.md): without a daemon,
# from pinned inputs, reproducibly, for linux/amd64 and linux/arm64, with an SBOM and a cosign signature, into
# .cache/images/agent/. That is the recipe users run too. This Dockerfile describes the same image for Docker
# users (same paths: /nodejs/bin/node, /app/lib, user 65532) but its base images are not what is built there.
#
# The pool-spirit agent image: the third container of every pool-spirit pod (core/render/containers.ts).
# It applies the bootstrap manifests to the pod's own apiserver and reports leader and etcd health into the
# PoolSpirit status. Build from the repository root:
#   docker build -f infra/images/agent.Dockerfile -t <repo>/pool-spirit-agent:<version> .
#
# Same shape as forwarder.Dockerfile: esbuild bundles agent/main.ts into one ES module; the runtime is
# distroless Node 22 (no shell), the file owned by root, the process the distroless `nonroot` user 65532 —
# the RUN_AS_USER the rendered pod sets (core/render/layout.ts). The rendered container has
# readOnlyRootFilesystem: true and only read-only mounts; the agent writes nothing to disk.
# The container passes flags only (`args`, no `command`), so the entrypoint is the agent itself.
#
# Base image digests: see forwarder.Dockerfile (same pins, same date).

FROM node:22-bookworm-slim@sha256:6c74791e557ce11fc957704f6d4fe134a7bc8d6f5ca4403205b2966bd488f6b3 AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY agent ./agent
COPY core ./core
COPY adapters ./adapters
COPY events ./events
COPY shared ./shared
# CommonJS dependencies use require() and __dirname: the banner gives the ES module bundle both. etcd3 reads
# its gRPC definitions at load time from <its lib>/../proto; bundled, that is /app/lib/../proto.
RUN ./node_modules/.bin/esbuild agent/main.ts --bundle --platform=node --format=esm \
      --target=node22 --minify --legal-comments=external --outfile=/out/lib/agent.mjs \
      "--banner:js=import{createRequire as __cr}from'node:module';import{fileURLToPath as __fu}from'node:url';import{dirname as __dn}from'node:path';const require=__cr(import.meta.url),__filename=__fu(import.meta.url),__dirname=__dn(__filename);" \
 && cp -r node_modules/etcd3/proto /out/proto

FROM gcr.io/distroless/nodejs22-debian12:nonroot@sha256:13593b7570658e8477de39e2f4a1dd25db2f836d68a0ba771251572d23bb4f8e
WORKDIR /app
COPY --from=build --chown=0:0 /out/ /app/
ENV NODE_ENV=production
USER 65532:65532
ENTRYPOINT ["/nodejs/bin/node", "/app/lib/agent.mjs"]
