// Command images builds the product's OCI images without a daemon: from a spec (scripts/images.ts writes
// it) to an OCI layout and archive whose digest depends only on the spec; and serves layouts from an
// in-memory loopback registry so that cosign can sign and verify them.
//
//	images build --spec FILE --layout DIR [--archive FILE]
//	images serve [--addr 127.0.0.1:0] [--save-signatures] IMAGE_DIR...
//	images sbom --in FILE --out FILE
//	images rootfs IMAGE_DIR OS/ARCH > rootfs.tar
//	images push [--insecure] IMAGE_DIR REPOSITORY
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: images build|serve|sbom|rootfs|push ...")
	}
	switch args[0] {
	case "build":
		fs := flag.NewFlagSet("build", flag.ContinueOnError)
		specFile := fs.String("spec", "", "the image spec (JSON)")
		layoutDir := fs.String("layout", "", "where to write the OCI layout")
		archive := fs.String("archive", "", "where to write the layout as one tar (optional)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *specFile == "" || *layoutDir == "" {
			return fmt.Errorf("build: --spec and --layout are required")
		}
		spec, err := readSpec(*specFile)
		if err != nil {
			return err
		}
		res, err := buildImage(spec, *layoutDir, *archive)
		if err != nil {
			return fmt.Errorf("build %s: %w", spec.Name, err)
		}
		return json.NewEncoder(os.Stdout).Encode(res)
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
		save := fs.Bool("save-signatures", false, "on exit, store each image's cosign signature beside its layout")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return serve(*addr, fs.Args(), *save)
	case "push":
		return push(args[1:])
	case "rootfs":
		return rootfsCommand(args[1:])
	case "sbom":
		fs := flag.NewFlagSet("sbom", flag.ContinueOnError)
		in := fs.String("in", "", "the components (JSON, SBOMInput)")
		out := fs.String("out", "", "where to write the CycloneDX JSON")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *in == "" || *out == "" {
			return fmt.Errorf("sbom: --in and --out are required")
		}
		return writeSBOM(*in, *out)
	default:
		return fmt.Errorf("unknown command %q: expected build, serve, sbom, rootfs or push", args[0])
	}
}
