#!/usr/bin/env bash
# Packages the functions and writes the CloudFormation to .serverless/ offline (no AWS credentials needed).
set -euo pipefail
cd "$(dirname "$0")/.."
export SLS_TELEMETRY_DISABLED=1 SLS_NOTIFICATIONS_MODE=off SLS_DEPRECATION_DISABLE='*'
exec osls package --stage "${STAGE:-dev}" "$@"
