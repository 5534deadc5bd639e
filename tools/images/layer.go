package main

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"
)

// layerTar writes the entries as an uncompressed tar that depends on nothing but the spec: entries sorted by
// path, parents added as root-owned 0755 directories, every time stamp the spec's creation time, no user or
// group names, no PAX extras (access and change times).
func layerTar(w io.Writer, entries []Entry, mtime time.Time) error {
	byPath := map[string]Entry{}
	for _, e := range entries {
		p := path.Clean(strings.TrimPrefix(e.Path, "/"))
		if _, dup := byPath[p]; dup {
			return fmt.Errorf("%s: listed twice", p)
		}
		e.Path = p
		byPath[p] = e
	}
	for p := range byPath {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := byPath[dir]; !ok {
				byPath[dir] = Entry{Path: dir, Type: "dir", Mode: 0o755}
			}
		}
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	tw := tar.NewWriter(w)
	for _, p := range paths {
		e := byPath[p]
		hdr := &tar.Header{
			Name:    p,
			Mode:    e.Mode,
			Uid:     e.UID,
			Gid:     e.GID,
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		var body io.Reader
		switch e.Type {
		case "dir":
			hdr.Typeflag = tar.TypeDir
			hdr.Name = p + "/"
		case "symlink":
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = e.Target
		case "file":
			hdr.Typeflag = tar.TypeReg
			if e.Data != "" {
				hdr.Size = int64(len(e.Data))
				body = strings.NewReader(e.Data)
			} else {
				f, err := os.Open(e.Src)
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				defer f.Close()
				info, err := f.Stat()
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				hdr.Size = info.Size()
				body = f
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if body != nil {
			if _, err := io.Copy(tw, body); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	return tw.Close()
}
