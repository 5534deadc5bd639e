# syntax=docker/dockerfile:1
#
# The images are built by `npm run images` (scripts/images.ts, tools/images; docs/images.md): without a daemon,
# from pinned inputs, reproducibly, for linux/amd64 and linux/arm64, with an SBOM and a cosign signature, into
# .cache/images/forwarder/. That is the recipe users run too. This Dockerfile describes the same image for Docker
# users (same paths: /nodejs/bin/node, /app/lib, user 65532) but its base images are not what is built there.
#
# The forwarder image: one per cluster, runs `spiritctl forwarder` (infra/images/forwarder-main.ts).
# Build from the repository root:
#   docker build -f infra/images/forwarder.Dockerfile -t <repo>/pool-spirit-forwarder:<version> .
#
# Two stages: the build stage bundles the entry and everything it imports into one ES module with esbuild;
# the runtime is distroless Node 22 (no shell, no package manager) holding that one file, owned by root and
# read-only for the process, which runs as the distroless `nonroot` user (65532). Nothing is written at run
# time, so the pod runs with readOnlyRootFilesystem: true and no writable volume.
#
# Base images are pinned by digest (a tag can be moved). Digests as published for the tags named, taken from
# public Dockerfiles resolved against the registries on 2026-07-17 (node:22-bookworm-slim was then 22.23.1);
# re-resolve when bumping, e.g. `docker buildx imagetools inspect node:22-bookworm-slim`.

FROM node:22-bookworm-slim@sha256:6c74791e557ce11fc957704f6d4fe134a7bc8d6f5ca4403205b2966bd488f6b3 AS build
WORKDIR /src
# Dependencies first (cached until the lockfile changes). No install scripts: nothing here needs one, and
# esbuild finds its platform binary without its postinstall.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY cli ./cli
COPY core ./core
COPY adapters ./adapters
COPY events ./events
COPY forwarder ./forwarder
COPY shared ./shared
COPY infra/images/forwarder-main.ts ./infra/images/forwarder-main.ts
# Some dependencies are CommonJS and use require() and __dirname: the banner gives the ES module bundle
# both (__dirname is /app/lib at run time).
RUN ./node_modules/.bin/esbuild infra/images/forwarder-main.ts --bundle --platform=node --format=esm \
      --target=node22 --minify --legal-comments=external --outfile=/out/lib/forwarder.mjs \
      "--banner:js=import{createRequire as __cr}from'node:module';import{fileURLToPath as __fu}from'node:url';import{dirname as __dn}from'node:path';const require=__cr(import.meta.url),__filename=__fu(import.meta.url),__dirname=__dn(__filename);"

FROM gcr.io/distroless/nodejs22-debian12:nonroot@sha256:13593b7570658e8477de39e2f4a1dd25db2f836d68a0ba771251572d23bb4f8e
WORKDIR /app
COPY --from=build --chown=0:0 /out/ /app/
ENV NODE_ENV=production
USER 65532:65532
EXPOSE 9090
# Exec form, node as PID 1: SIGTERM reaches the forwarder, which flushes its notices before exiting.
ENTRYPOINT ["/nodejs/bin/node", "/app/lib/forwarder.mjs"]
