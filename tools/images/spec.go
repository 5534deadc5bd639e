package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
)

// Spec is one image as scripts/images.ts describes it: a reference, a fixed creation time and, per platform,
// the layers' entries. Everything the image holds is named here, so the same spec gives the same digest.
type Spec struct {
	Name string `json:"name"`
	Ref  string `json:"ref"`
	// ExtraRefs name the same image under more tags (one agent build serves several bundle versions).
	ExtraRefs []string          `json:"extraRefs,omitempty"`
	Created   int64             `json:"created"`
	Config    ImageConfig       `json:"config"`
	Platforms []PlatformSpec    `json:"platforms"`
	Labels    map[string]string `json:"labels,omitempty"`
}

type ImageConfig struct {
	User         string   `json:"user"`
	Entrypoint   []string `json:"entrypoint,omitempty"`
	Cmd          []string `json:"cmd,omitempty"`
	Env          []string `json:"env,omitempty"`
	WorkingDir   string   `json:"workingDir,omitempty"`
	ExposedPorts []string `json:"exposedPorts,omitempty"`
}

type PlatformSpec struct {
	OS           string      `json:"os"`
	Architecture string      `json:"architecture"`
	Variant      string      `json:"variant,omitempty"`
	Layers       []LayerSpec `json:"layers"`
}

type LayerSpec struct {
	// CreatedBy goes into the image history: what this layer is.
	CreatedBy string  `json:"createdBy"`
	Entries   []Entry `json:"entries"`
}

// Entry is one file system object of a layer. Owner and mode are always explicit: nothing comes from the
// build machine but the bytes of Src.
type Entry struct {
	Path   string `json:"path"`
	Type   string `json:"type"` // file | dir | symlink
	Src    string `json:"src,omitempty"`
	Data   string `json:"data,omitempty"` // file content given inline (small text files)
	Target string `json:"target,omitempty"`
	Mode   int64  `json:"mode"`
	UID    int    `json:"uid"`
	GID    int    `json:"gid"`
}

const maxSpecBytes = 16 << 20

func readSpec(file string) (*Spec, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxSpecBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", file, maxSpecBytes)
	}
	var s Spec
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &s, s.validate()
}

func (s *Spec) validate() error {
	if s.Name == "" {
		return fmt.Errorf("spec: name: required")
	}
	if s.Ref == "" || !strings.Contains(s.Ref, ":") {
		return fmt.Errorf("spec %s: ref: expected <repository>:<tag>, got %q", s.Name, s.Ref)
	}
	for _, r := range s.ExtraRefs {
		if !strings.Contains(r, ":") {
			return fmt.Errorf("spec %s: extraRefs: expected <repository>:<tag>, got %q", s.Name, r)
		}
	}
	if s.Created <= 0 {
		return fmt.Errorf("spec %s: created: expected seconds since the epoch (SOURCE_DATE_EPOCH)", s.Name)
	}
	if s.Config.User == "" {
		return fmt.Errorf("spec %s: config.user: required (images never default to root)", s.Name)
	}
	if len(s.Platforms) == 0 {
		return fmt.Errorf("spec %s: platforms: at least one", s.Name)
	}
	for i, p := range s.Platforms {
		if p.OS == "" || p.Architecture == "" {
			return fmt.Errorf("spec %s: platforms[%d]: os and architecture are required", s.Name, i)
		}
		for j, l := range p.Layers {
			for k, e := range l.Entries {
				where := fmt.Sprintf("spec %s: platforms[%d].layers[%d].entries[%d]", s.Name, i, j, k)
				clean := path.Clean(strings.TrimPrefix(e.Path, "/"))
				if clean == "." || strings.HasPrefix(clean, "..") {
					return fmt.Errorf("%s.path: %q is not inside the image", where, e.Path)
				}
				switch e.Type {
				case "file":
					if (e.Src == "") == (e.Data == "") {
						return fmt.Errorf("%s: a file needs exactly one of src or data", where)
					}
				case "dir":
				case "symlink":
					if e.Target == "" {
						return fmt.Errorf("%s.target: required for a symlink", where)
					}
				default:
					return fmt.Errorf("%s.type: expected file, dir or symlink, got %q", where, e.Type)
				}
				if e.Mode < 0 || e.Mode > 0o7777 {
					return fmt.Errorf("%s.mode: %o is not a permission mode", where, e.Mode)
				}
			}
		}
	}
	return nil
}
