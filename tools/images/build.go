package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// PlatformResult is what one platform's image weighs: compressed (what a node pulls) and unpacked.
type PlatformResult struct {
	Platform      string `json:"platform"`
	Digest        string `json:"digest"`
	SizeBytes     int64  `json:"sizeBytes"`
	UnpackedBytes int64  `json:"unpackedBytes"`
}

type BuildResult struct {
	Name      string           `json:"name"`
	Ref       string           `json:"ref"`
	Digest    string           `json:"digest"`
	Layout    string           `json:"layout"`
	Archive   string           `json:"archive"`
	Platforms []PlatformResult `json:"platforms"`
}

const (
	// containerd's importer (`ctr images import`) names the image from this annotation.
	containerdNameAnnotation = "io.containerd.image.name"
	refNameAnnotation        = "org.opencontainers.image.ref.name"
)

func buildImage(spec *Spec, layoutDir, archive string) (*BuildResult, error) {
	created := time.Unix(spec.Created, 0).UTC()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	res := &BuildResult{Name: spec.Name, Ref: spec.Ref, Layout: layoutDir, Archive: archive}
	for _, p := range spec.Platforms {
		img, unpacked, err := platformImage(spec, p, created)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", p.OS, p.Architecture, err)
		}
		digest, err := img.Digest()
		if err != nil {
			return nil, err
		}
		size, err := imageSize(img)
		if err != nil {
			return nil, err
		}
		platform := &v1.Platform{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: platform}})
		name := p.OS + "/" + p.Architecture
		if p.Variant != "" {
			name += "/" + p.Variant
		}
		res.Platforms = append(res.Platforms, PlatformResult{Platform: name, Digest: digest.String(), SizeBytes: size, UnpackedBytes: unpacked})
	}
	digest, err := idx.Digest()
	if err != nil {
		return nil, err
	}
	res.Digest = digest.String()

	tmp := layoutDir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return nil, err
	}
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return nil, err
	}
	for _, ref := range append([]string{spec.Ref}, spec.ExtraRefs...) {
		annotations := map[string]string{containerdNameAnnotation: ref, refNameAnnotation: ref}
		if err := lp.AppendIndex(idx, layout.WithAnnotations(annotations)); err != nil {
			return nil, err
		}
	}
	if err := os.RemoveAll(layoutDir); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, layoutDir); err != nil {
		return nil, err
	}
	if archive != "" {
		if err := archiveDir(layoutDir, archive, created); err != nil {
			return nil, fmt.Errorf("archive %s: %w", archive, err)
		}
	}
	return res, nil
}

func platformImage(spec *Spec, p PlatformSpec, created time.Time) (v1.Image, int64, error) {
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	var unpacked int64
	for i, ls := range p.Layers {
		var buf bytes.Buffer
		if err := layerTar(&buf, ls.Entries, created); err != nil {
			return nil, 0, fmt.Errorf("layer %d (%s): %w", i, ls.CreatedBy, err)
		}
		unpacked += int64(buf.Len())
		raw := buf.Bytes()
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(raw)), nil
		}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
		if err != nil {
			return nil, 0, err
		}
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:   layer,
			History: v1.History{Created: v1.Time{Time: created}, CreatedBy: ls.CreatedBy},
		})
		if err != nil {
			return nil, 0, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, 0, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: created}
	cf.OS = p.OS
	cf.Architecture = p.Architecture
	cf.Variant = p.Variant
	cf.Config.User = spec.Config.User
	cf.Config.Entrypoint = spec.Config.Entrypoint
	cf.Config.Cmd = spec.Config.Cmd
	cf.Config.Env = spec.Config.Env
	cf.Config.WorkingDir = spec.Config.WorkingDir
	cf.Config.Labels = spec.Labels
	if len(spec.Config.ExposedPorts) > 0 {
		cf.Config.ExposedPorts = map[string]struct{}{}
		for _, port := range spec.Config.ExposedPorts {
			cf.Config.ExposedPorts[port] = struct{}{}
		}
	}
	img, err = mutate.ConfigFile(img, cf)
	return img, unpacked, err
}

// imageSize is what a pull transfers: manifest, config and compressed layers.
func imageSize(img v1.Image) (int64, error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return 0, err
	}
	total := int64(len(manifest) + len(config))
	layers, err := img.Layers()
	if err != nil {
		return 0, err
	}
	for _, l := range layers {
		s, err := l.Size()
		if err != nil {
			return 0, err
		}
		total += s
	}
	return total, nil
}

// archiveDir packs an OCI layout into one tar (`ctr images import`, `skopeo copy oci-archive:`), with the same
// fixed order, owners and times as the layers.
func archiveDir(dir, archive string, mtime time.Time) error {
	var entries []Entry
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if info.IsDir() {
			entries = append(entries, Entry{Path: filepath.ToSlash(rel), Type: "dir", Mode: 0o755})
		} else {
			entries = append(entries, Entry{Path: filepath.ToSlash(rel), Type: "file", Src: p, Mode: 0o644})
		}
		return nil
	})
	if err != nil {
		return err
	}
	tmp := archive + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := layerTar(f, entries, mtime); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, archive)
}
