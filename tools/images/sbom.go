package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// SBOMInput lists what an image holds that no generator can read from a binary: the npm packages esbuild put
// into a bundle (from its metafile), the Debian packages and the Node runtime of a Node image, the sources of
// the pause binary. Go binaries' modules come from cyclonedx-gomod and are merged in (GoBOMs).
type SBOMInput struct {
	Image      string          `json:"image"`
	Version    string          `json:"version"`
	Created    int64           `json:"created"`
	Components []SBOMComponent `json:"components"`
	GoBOMs     []string        `json:"goBoms,omitempty"`
}

type SBOMComponent struct {
	Type    string `json:"type"` // library | application | operating-system
	Name    string `json:"name"`
	Version string `json:"version"`
	PURL    string `json:"purl"`
	License string `json:"license,omitempty"`
	Comment string `json:"comment,omitempty"`
}

func writeSBOM(inFile, outFile string) error {
	raw, err := os.ReadFile(inFile)
	if err != nil {
		return err
	}
	var in SBOMInput
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("%s: %w", inFile, err)
	}
	bom := cdx.NewBOM()
	// The serial number stays unset: a random one would make two builds' SBOMs differ.
	bom.Metadata = &cdx.Metadata{
		Timestamp: time.Unix(in.Created, 0).UTC().Format(time.RFC3339),
		Component: &cdx.Component{Type: cdx.ComponentTypeContainer, Name: in.Image, Version: in.Version, BOMRef: "image"},
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{
			{Type: cdx.ComponentTypeApplication, Name: "pool-spirit tools/images", Description: "esbuild metafile, pinned Debian and npm inputs"},
			{Type: cdx.ComponentTypeApplication, Name: "cyclonedx-gomod", Description: "Go binaries' modules"},
		}},
	}
	var comps []cdx.Component
	seen := map[string]bool{}
	add := func(c cdx.Component) {
		if c.PackageURL != "" && seen[c.PackageURL] {
			return
		}
		seen[c.PackageURL] = true
		c.BOMRef = c.PackageURL
		comps = append(comps, c)
	}
	for _, c := range in.Components {
		comp := cdx.Component{Type: cdx.ComponentType(c.Type), Name: c.Name, Version: c.Version, PackageURL: c.PURL, Description: c.Comment}
		if c.License != "" {
			comp.Licenses = &cdx.Licenses{{Expression: c.License}}
		}
		add(comp)
	}
	for _, f := range in.GoBOMs {
		gb, err := os.Open(f)
		if err != nil {
			return err
		}
		var goBOM cdx.BOM
		err = cdx.NewBOMDecoder(gb, cdx.BOMFileFormatJSON).Decode(&goBOM)
		gb.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if goBOM.Metadata != nil && goBOM.Metadata.Component != nil {
			main := *goBOM.Metadata.Component
			main.Components = nil
			add(main)
		}
		if goBOM.Components != nil {
			for _, c := range *goBOM.Components {
				add(c)
			}
		}
	}
	bom.Components = &comps
	out, err := os.Create(outFile)
	if err != nil {
		return err
	}
	enc := cdx.NewBOMEncoder(out, cdx.BOMFileFormatJSON).SetPretty(true)
	if err := enc.Encode(bom); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
