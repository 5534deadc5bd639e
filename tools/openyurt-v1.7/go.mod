// OpenYurt v1.7.0, the first release whose NodePool CRD serves and stores v1beta2 (and whose YurtHub has no
// coordinator client). Only its CRDs are used (charts/yurt-manager/crds, read by scripts/kube-bins.sh for the
// local stack's `--openyurt v1.7.0`); nothing here is built, so the module names no package.
module github.com/pool-spirit/reconciler/tools/openyurt-v1.7

go 1.25.0

require github.com/openyurtio/openyurt v1.7.0
