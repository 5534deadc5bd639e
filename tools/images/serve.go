package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// ServedImage is one image pushed into the loopback registry.
type ServedImage struct {
	Dir string `json:"dir"`
	// Ref is the reference the image is built for; Local the same image in the loopback registry, by digest.
	Ref   string `json:"ref"`
	Local string `json:"local"`
}

// serve pushes each image directory's OCI layout (dir/oci) and any saved signature (dir/signature) into an
// in-memory registry on the loopback address, prints where they are as one JSON line and serves until its
// standard input closes. Then, with save, it stores the cosign signature of each image found in the registry
// into dir/signature — cosign signs registry references, and this is how a layout on disk gets one.
func serve(addr string, dirs []string, save bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	host := ln.Addr().String()

	var served []ServedImage
	for _, dir := range dirs {
		s, err := pushDir(host, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		served = append(served, *s)
	}
	out, err := json.Marshal(map[string]any{"registry": host, "images": served})
	if err != nil {
		return err
	}
	fmt.Println(string(out))

	// Serve until the caller closes our standard input.
	r := bufio.NewReader(os.Stdin)
	for {
		if _, err := r.ReadByte(); err != nil {
			break
		}
	}
	if save {
		for _, s := range served {
			if err := saveSignature(s); err != nil {
				return fmt.Errorf("%s: saving the signature: %w", s.Dir, err)
			}
		}
	}
	return srv.Close()
}

// localRepo keeps the whole reference as the repository path, so images of different registries never collide.
func localRepo(host, ref string) (name.Repository, string, error) {
	tagAt := strings.LastIndex(ref, ":")
	if tagAt < 0 || strings.Contains(ref[tagAt:], "/") {
		return name.Repository{}, "", fmt.Errorf("ref %q has no tag", ref)
	}
	if host == "" {
		return name.Repository{}, ref[tagAt+1:], nil
	}
	repo, err := name.NewRepository(host+"/"+ref[:tagAt], name.Insecure)
	return repo, ref[tagAt+1:], err
}

func pushDir(host, dir string) (*ServedImage, error) {
	root, manifest, err := readIndex(dir, "oci")
	if err != nil {
		return nil, err
	}
	if len(manifest.Manifests) == 0 {
		return nil, fmt.Errorf("the layout holds no image")
	}
	// Every entry is the same image index under another reference; the first is the one that is signed.
	desc := manifest.Manifests[0]
	ref := desc.Annotations[refNameAnnotation]
	repo, _, err := localRepo(host, ref)
	if err != nil {
		return nil, err
	}
	for _, d := range manifest.Manifests {
		if d.Digest != desc.Digest {
			return nil, fmt.Errorf("the layout holds two different images (%s, %s)", desc.Digest, d.Digest)
		}
		idx, err := root.ImageIndex(d.Digest)
		if err != nil {
			return nil, err
		}
		r, tag, err := localRepo(host, d.Annotations[refNameAnnotation])
		if err != nil {
			return nil, err
		}
		if err := remote.WriteIndex(r.Tag(tag), idx); err != nil {
			return nil, err
		}
	}
	if err := pushSignature(dir, repo); err != nil {
		return nil, err
	}
	return &ServedImage{Dir: dir, Ref: ref, Local: repo.Digest(desc.Digest.String()).String()}, nil
}

// saveSignature copies cosign's signature manifest (tag sha256-<hex>.sig) of the image into dir/signature.
func saveSignature(s ServedImage) error {
	d, err := name.NewDigest(s.Local, name.Insecure)
	if err != nil {
		return err
	}
	sigTag := d.Context().Tag(strings.Replace(d.DigestStr(), ":", "-", 1) + ".sig")
	img, err := remote.Image(sigTag)
	if err != nil {
		return fmt.Errorf("no signature at %s (was the image signed?): %w", sigTag, err)
	}
	dest := filepath.Join(s.Dir, "signature")
	tmp := dest + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	lp, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return err
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{refNameAnnotation: sigTag.TagStr()})); err != nil {
		return err
	}
	if err := os.RemoveAll(dest); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}
