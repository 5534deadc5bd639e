package main

import (
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// An image directory holds the image as an OCI layout in oci/ (one image index under each of its
// references) and, once signed, cosign's signature manifest as a layout in signature/.

// readIndex opens the layout in an image directory's sub-directory and reads its root index.
func readIndex(dir, sub string) (v1.ImageIndex, *v1.IndexManifest, error) {
	lp, err := layout.FromPath(filepath.Join(dir, sub))
	if err != nil {
		return nil, nil, err
	}
	root, err := lp.ImageIndex()
	if err != nil {
		return nil, nil, err
	}
	manifest, err := root.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	return root, manifest, nil
}

// pushSignature writes an image directory's saved signature (if it was signed) to repo under its tag
// (sha256-<hex>.sig), where cosign looks for it.
func pushSignature(dir string, repo name.Repository, opts ...remote.Option) error {
	if _, err := layout.FromPath(filepath.Join(dir, "signature")); err != nil {
		return nil // not signed
	}
	root, manifest, err := readIndex(dir, "signature")
	if err != nil {
		return err
	}
	for _, d := range manifest.Manifests {
		img, err := root.Image(d.Digest)
		if err != nil {
			return err
		}
		if err := remote.Write(repo.Tag(d.Annotations[refNameAnnotation]), img, opts...); err != nil {
			return err
		}
	}
	return nil
}
