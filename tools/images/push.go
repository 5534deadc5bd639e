package main

import (
	"flag"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// push copies an image directory's index, byte for byte (same digest), to a repository under each tag the
// layout names, and its saved cosign signature beside it. Credentials come from the Docker config
// (`crane auth login`, `docker login`, or `aws ecr get-login-password | … login`), as for any registry client.
func push(args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	insecure := fs.Bool("insecure", false, "allow a plain-HTTP registry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("usage: images push [--insecure] IMAGE_DIR REPOSITORY")
	}
	dir := fs.Arg(0)
	var opts []name.Option
	if *insecure {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(fs.Arg(1), opts...)
	if err != nil {
		return err
	}
	auth := remote.WithAuthFromKeychain(authn.DefaultKeychain)
	root, rm, err := readIndex(dir, "oci")
	if err != nil {
		return err
	}
	for _, d := range rm.Manifests {
		idx, err := root.ImageIndex(d.Digest)
		if err != nil {
			return err
		}
		ref := d.Annotations[refNameAnnotation]
		_, tag, err := localRepo("", ref)
		if err != nil {
			return err
		}
		if err := remote.WriteIndex(repo.Tag(tag), idx, auth); err != nil {
			return err
		}
		fmt.Println(repo.Digest(d.Digest.String()).String())
	}
	return pushSignature(dir, repo, auth)
}
