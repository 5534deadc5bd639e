// YurtHub v1.5.1 (github.com/openyurtio/openyurt/cmd/yurthub), built by scripts/kube-bins.sh to judge the
// pool-spirit as a yurt-coordinator drop-in, and yurt-manager v1.5.1 (cmd/yurt-manager) from the same module:
// OpenYurt's own webhooks and controllers beside the product (dev/local/openyurt). v1.6.0 is the last release
// with coordinator support, but the Go module proxy does not serve it; v1.5.1 has the same coordinator flags.
// The same module gives OpenYurt v1.5.1's CRDs and yurt-manager chart (charts/yurt-manager) to the local stack.
// A dependency's replace directives are ignored, so upstream's are copied below verbatim (k8s.io/* at 0.28.9,
// k8s.io/kubernetes from its GitHub mirror, the forked apiserver-network-proxy). Kept apart from tools/kube* so
// their versions never mix.
module github.com/pool-spirit/reconciler/tools/yurthub

go 1.24

// Upstream v1.5.x was built with Go 1.20; keep its runtime defaults (TLS, x509) rather than 1.26's.
godebug default=go1.21

tool (
	github.com/openyurtio/openyurt/cmd/yurt-manager
	github.com/openyurtio/openyurt/cmd/yurthub
)

require (
	github.com/Azure/go-ansiterm v0.0.0-20210617225240-d185dfc1b5a1 // indirect
	github.com/NYTimes/gziphandler v1.1.1 // indirect
	github.com/antlr/antlr4/runtime/Go/antlr/v4 v4.0.0-20230305170008-8188dc5388df // indirect
	github.com/asaskevich/govalidator v0.0.0-20190424111038-f61b66f89f4a // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/blang/semver/v4 v4.0.0 // indirect
	github.com/cenkalti/backoff/v4 v4.2.1 // indirect
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.5.0 // indirect
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/docker/distribution v2.8.2+incompatible // indirect
	github.com/emicklei/go-restful/v3 v3.11.0 // indirect
	github.com/evanphx/json-patch v5.6.0+incompatible // indirect
	github.com/evanphx/json-patch/v5 v5.6.0 // indirect
	github.com/felixge/httpsnoop v1.0.3 // indirect
	github.com/fsnotify/fsnotify v1.6.0 // indirect
	github.com/go-jose/go-jose/v3 v3.0.3 // indirect
	github.com/go-logr/logr v1.2.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-openapi/jsonpointer v0.19.6 // indirect
	github.com/go-openapi/jsonreference v0.20.2 // indirect
	github.com/go-openapi/swag v0.22.3 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang-jwt/jwt v3.2.2+incompatible // indirect
	github.com/golang/groupcache v0.0.0-20210331224755-41bb18bfe9da // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/cel-go v0.16.1 // indirect
	github.com/google/gnostic-models v0.6.8 // indirect
	github.com/google/go-cmp v0.5.9 // indirect
	github.com/google/gofuzz v1.2.0 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/gorilla/mux v1.8.0 // indirect
	github.com/grpc-ecosystem/go-grpc-prometheus v1.2.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.11.3 // indirect
	github.com/imdario/mergo v0.3.12 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/josharian/intern v1.0.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/liggitt/tabwriter v0.0.0-20181228230101-89fcab3d43de // indirect
	github.com/mailru/easyjson v0.7.7 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.4 // indirect
	github.com/moby/term v0.0.0-20221205130635-1aeaba878587 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/mxk/go-flowrate v0.0.0-20140419014527-cca7078d478f // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/openyurtio/openyurt v1.5.1 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/projectcalico/api v0.0.0-20230222223746-44aa60c2201f // indirect
	github.com/prometheus/client_golang v1.16.0 // indirect
	github.com/prometheus/client_model v0.4.0 // indirect
	github.com/prometheus/common v0.44.0 // indirect
	github.com/prometheus/procfs v0.10.1 // indirect
	github.com/spf13/cobra v1.7.0 // indirect
	github.com/spf13/pflag v1.0.5 // indirect
	github.com/stoewer/go-strcase v1.2.0 // indirect
	github.com/vishvananda/netlink v1.2.1-beta.2 // indirect
	github.com/vishvananda/netns v0.0.4 // indirect
	go.etcd.io/etcd/api/v3 v3.5.9 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.5.9 // indirect
	go.etcd.io/etcd/client/v3 v3.5.9 // indirect
	go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc v0.35.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.35.1 // indirect
	go.opentelemetry.io/otel v1.10.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/internal/retry v1.10.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.10.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.10.0 // indirect
	go.opentelemetry.io/otel/metric v0.31.0 // indirect
	go.opentelemetry.io/otel/sdk v1.10.0 // indirect
	go.opentelemetry.io/otel/trace v1.10.0 // indirect
	go.opentelemetry.io/proto/otlp v0.19.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.25.0 // indirect
	golang.org/x/crypto v0.21.0 // indirect
	golang.org/x/exp v0.0.0-20220827204233-334a2380cb91 // indirect
	golang.org/x/net v0.23.0 // indirect
	golang.org/x/oauth2 v0.8.0 // indirect
	golang.org/x/sync v0.5.0 // indirect
	golang.org/x/sys v0.18.0 // indirect
	golang.org/x/term v0.18.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	golang.org/x/time v0.5.0 // indirect
	gomodules.xyz/jsonpatch/v2 v2.4.0 // indirect
	google.golang.org/appengine v1.6.7 // indirect
	google.golang.org/genproto v0.0.0-20230526161137-0005af68ea54 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20230525234035-dd9d682886f9 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20230525234030-28d5490b6b19 // indirect
	google.golang.org/grpc v1.57.1 // indirect
	google.golang.org/protobuf v1.33.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
	gopkg.in/square/go-jose.v2 v2.6.0 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
	k8s.io/api v0.28.9 // indirect
	k8s.io/apiextensions-apiserver v0.28.9 // indirect
	k8s.io/apimachinery v0.28.9 // indirect
	k8s.io/apiserver v0.28.9 // indirect
	k8s.io/cli-runtime v0.28.9 // indirect
	k8s.io/client-go v0.28.9 // indirect
	k8s.io/cloud-provider v0.28.9 // indirect
	k8s.io/cluster-bootstrap v0.28.9 // indirect
	k8s.io/component-base v0.28.9 // indirect
	k8s.io/component-helpers v0.28.9 // indirect
	k8s.io/controller-manager v0.28.9 // indirect
	k8s.io/klog/v2 v2.100.1 // indirect
	k8s.io/kms v0.28.9 // indirect
	k8s.io/kube-controller-manager v0.28.9 // indirect
	k8s.io/kube-openapi v0.0.0-20230717233707-2695361300d9 // indirect
	k8s.io/kubectl v0.28.9 // indirect
	k8s.io/kubelet v0.28.9 // indirect
	k8s.io/kubernetes v0.0.0-00010101000000-000000000000 // indirect
	k8s.io/utils v0.0.0-20230406110748-d93618cff8a2 // indirect
	sigs.k8s.io/apiserver-network-proxy/konnectivity-client v0.1.2 // indirect
	sigs.k8s.io/controller-runtime v0.16.5 // indirect
	sigs.k8s.io/json v0.0.0-20221116044647-bc3834ca7abd // indirect
	sigs.k8s.io/structured-merge-diff/v4 v4.2.3 // indirect
	sigs.k8s.io/yaml v1.3.0 // indirect
)

replace (
	k8s.io/api => k8s.io/api v0.28.9
	k8s.io/apiextensions-apiserver => k8s.io/apiextensions-apiserver v0.28.9
	k8s.io/apimachinery => k8s.io/apimachinery v0.28.9
	k8s.io/apiserver => k8s.io/apiserver v0.28.9
	k8s.io/cli-runtime => k8s.io/cli-runtime v0.28.9
	k8s.io/client-go => k8s.io/client-go v0.28.9
	k8s.io/cloud-provider => k8s.io/cloud-provider v0.28.9
	k8s.io/cluster-bootstrap => k8s.io/cluster-bootstrap v0.28.9
	k8s.io/code-generator => k8s.io/code-generator v0.28.9
	k8s.io/component-base => k8s.io/component-base v0.28.9
	k8s.io/component-helpers => k8s.io/component-helpers v0.28.9
	k8s.io/controller-manager => k8s.io/controller-manager v0.28.9
	k8s.io/cri-api => k8s.io/cri-api v0.28.9
	k8s.io/csi-translation-lib => k8s.io/csi-translation-lib v0.28.9
	k8s.io/dynamic-resource-allocation => k8s.io/dynamic-resource-allocation v0.28.9
	k8s.io/endpointslice => k8s.io/endpointslice v0.28.9
	k8s.io/klog/v2 => k8s.io/klog/v2 v2.100.1
	k8s.io/kube-aggregator => k8s.io/kube-aggregator v0.28.9
	k8s.io/kube-controller-manager => k8s.io/kube-controller-manager v0.28.9
	k8s.io/kube-proxy => k8s.io/kube-proxy v0.28.9
	k8s.io/kube-scheduler => k8s.io/kube-scheduler v0.28.9
	k8s.io/kubectl => k8s.io/kubectl v0.28.9
	k8s.io/kubelet => k8s.io/kubelet v0.28.9
	k8s.io/kubernetes => github.com/kubernetes/kubernetes v1.28.9
	k8s.io/legacy-cloud-providers => k8s.io/legacy-cloud-providers v0.28.9
	k8s.io/metrics => k8s.io/metrics v0.28.9
	k8s.io/mount-utils => k8s.io/mount-utils v0.28.9
	k8s.io/pod-security-admission => k8s.io/pod-security-admission v0.28.9
	k8s.io/sample-apiserver => k8s.io/sample-apiserver v0.28.9
	sigs.k8s.io/apiserver-network-proxy => github.com/openyurtio/apiserver-network-proxy v0.1.0
	sigs.k8s.io/apiserver-network-proxy/konnectivity-client => sigs.k8s.io/apiserver-network-proxy/konnectivity-client v0.30.2
)
