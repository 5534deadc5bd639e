package main

import (
	"fmt"
	"io"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// rootfs writes the flattened file system of one platform's image in an image directory's layout as a tar
// on out: what a container of that image starts from (the tests unpack it and run its binaries).
func rootfs(dir, platform string, out io.Writer) error {
	want, err := v1.ParsePlatform(platform)
	if err != nil {
		return err
	}
	root, rm, err := readIndex(dir, "oci")
	if err != nil {
		return err
	}
	if len(rm.Manifests) == 0 {
		return fmt.Errorf("%s: the layout holds no image", dir)
	}
	idx, err := root.ImageIndex(rm.Manifests[0].Digest)
	if err != nil {
		return err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Satisfies(*want) {
			img, err := idx.Image(d.Digest)
			if err != nil {
				return err
			}
			rc := mutate.Extract(img)
			defer rc.Close()
			_, err = io.Copy(out, rc)
			return err
		}
	}
	return fmt.Errorf("%s: no image for %s", dir, platform)
}

func rootfsCommand(args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: images rootfs IMAGE_DIR OS/ARCH > rootfs.tar")
	}
	return rootfs(args[0], args[1], os.Stdout)
}
