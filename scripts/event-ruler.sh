#!/usr/bin/env bash
# Builds the event-ruler judge (tools/event-ruler: AWS's event-ruler, the library behind EventBridge's pattern
# language, wrapped in one program) into the git-ignored .cache/event-ruler/: the judge's jar, its runtime
# dependencies in lib/, and `classpath`, the line to give `java -cp`. The tests judge the local bus's pattern
# matcher with it (test/dev/local/bus/pattern-judge.e2e.test.ts). Idempotent: nothing is done while the stamp is
# newer than the pom, the sources and this script. Needs Java 17 (a JDK: the judge is compiled) and Maven, which
# fetches event-ruler and its dependencies from Maven Central into ~/.m2 once.
#   bash scripts/event-ruler.sh          # build if needed
#   bash scripts/event-ruler.sh --print  # build if needed, then print the classpath
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
project=tools/event-ruler
cache="$root/.cache/event-ruler"
stamp="$cache/.built"

up_to_date() {
  [ -f "$stamp" ] && [ -f "$cache/classpath" ] || return 1
  [ -z "$(find "$project" scripts/event-ruler.sh -type f -newer "$stamp" -print -quit)" ]
}

if ! up_to_date; then
  missing=()
  command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "event-ruler: missing ${missing[*]} (Java 17 JDK and Maven build the judge); install them with: sudo apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
    echo "event-ruler: installing ${missing[*]} (Debian packages)" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
  if [ "${java_major%%.*}" -lt 17 ] 2>/dev/null; then
    echo "event-ruler: Java $java_major found; the judge needs Java 17 or newer (apt-get install -y openjdk-17-jdk-headless)" >&2
    exit 1
  fi
  echo "event-ruler: building the judge (Maven: event-ruler 2.1.0 from $project) into .cache/event-ruler" >&2
  rm -rf "$cache"
  mvn=(mvn -B -q -f "$project/pom.xml" package)
  # Offline first: a machine that already has the artifacts in ~/.m2 needs no network.
  if ! "${mvn[@]}" -o >/dev/null 2>&1; then
    if ! "${mvn[@]}" >&2; then
      echo "event-ruler: the Maven build failed (it needs Maven Central, or the artifacts in ~/.m2)" >&2
      exit 1
    fi
  fi
  {
    printf '%s' "$cache/build/event-ruler-judge.jar"
    for jar in "$cache"/lib/*.jar; do printf ':%s' "$jar"; done
    printf '\n'
  } >"$cache/classpath.tmp"
  mv "$cache/classpath.tmp" "$cache/classpath"
  touch "$stamp"
fi
if [ "${1:-}" = "--print" ]; then cat "$cache/classpath"; fi
