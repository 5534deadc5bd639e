// Command pointer-fields prints, as JSON, the singular scalar fields of the built-in kinds the local API
// decodes from protobuf whose Go type is a pointer (a zero value on the wire then means "set"). It reads the
// Go types of k8s.io/api at the pinned release by reflection: since Kubernetes 1.35 the generated code no
// longer embeds gogo-protobuf's descriptors, so the kubectl binary cannot tell any more.
package main

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
)

// The protobuf packages the local API serves, by Go import path.
var packages = map[string]bool{
	"k8s.io/api/core/v1":                   true,
	"k8s.io/api/apps/v1":                   true,
	"k8s.io/api/rbac/v1":                   true,
	"k8s.io/api/coordination/v1":           true,
	"k8s.io/api/policy/v1":                 true,
	"k8s.io/apimachinery/pkg/apis/meta/v1": true,
}

func main() {
	seen := map[reflect.Type]bool{}
	fields := map[string]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map {
				walk(t.Key())
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || !packages[t.PkgPath()] {
			return
		}
		seen[t] = true
		message := strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("protobuf")
			if tag == "" {
				walk(f.Type)
				continue
			}
			name := ""
			for _, part := range strings.Split(tag, ",") {
				if v, ok := strings.CutPrefix(part, "name="); ok {
					name = v
				}
			}
			pointer := f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() != reflect.Struct
			// A singular bytes field is a nil-able slice in Go: empty on the wire still means "set".
			bytes := f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8
			if pointer || bytes {
				fields[message+"."+name] = true
			}
			walk(f.Type)
		}
	}
	for _, t := range scheme.Scheme.AllKnownTypes() {
		walk(t)
	}
	// Served in core/v1 but reached from no registered kind.
	walk(reflect.TypeOf(corev1.Preconditions{}))
	out := map[string]any{
		"source":    "Go types of k8s.io/api and k8s.io/apimachinery at the release tools/kubectl/go.mod pins, read by reflection",
		"license":   "derived from the Kubernetes project (k8s.io/api, k8s.io/apimachinery), Apache-2.0",
		"generator": "tools/kubectl/cmd/pointer-fields (built by npm run kube-bins)",
	}
	list := make([]string, 0, len(fields))
	for f := range fields {
		list = append(list, f)
	}
	sort.Strings(list)
	out["fields"] = list
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}
