package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitTag(t *testing.T) {
	tests := []struct {
		ref, name, tag string
		wantErr        bool
	}{
		{ref: "registry.k8s.io/pause:3.10.1", name: "registry.k8s.io/pause", tag: "3.10.1"},
		{ref: "localhost:5000/busybox", name: "localhost:5000/busybox", tag: "latest"},
		{ref: "localhost:5000/busybox:1.36", name: "localhost:5000/busybox", tag: "1.36"},
		{ref: "busybox", name: "busybox", tag: "latest"},
		{ref: "busybox:", wantErr: true},
		{ref: "busybox@sha256:abc", wantErr: true},
		{ref: "", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.ref, func(t *testing.T) {
			name, tag, err := splitTag(tc.ref)
			if (err != nil) != tc.wantErr {
				t.Fatalf("splitTag(%q) error = %v, want error %v", tc.ref, err, tc.wantErr)
			}
			if name != tc.name || tag != tc.tag {
				t.Errorf("splitTag(%q) = %q, %q; want %q, %q", tc.ref, name, tag, tc.name, tc.tag)
			}
		})
	}
}

// readArchive returns the files of a tar by name.
func readArchive(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("read %s: %v", hdr.Name, err)
		}
		files[hdr.Name] = b
	}
}

func blobOf(t *testing.T, files map[string][]byte, digest string) []byte {
	t.Helper()
	b, ok := files["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")]
	if !ok {
		t.Fatalf("blob %s missing", digest)
	}
	if got := digestOf(b); got != digest {
		t.Fatalf("blob %s has digest %s", digest, got)
	}
	return b
}

func TestWriteArchive(t *testing.T) {
	rootfs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rootfs, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "bin", "tool"), []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("tool", filepath.Join(rootfs, "bin", "alias")); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "example.com/tool:1.0", Arch: "amd64", Entrypoint: []string{"/bin/tool"}, Cmd: []string{"-v"}, Env: []string{"A=B"}}

	out1, out2 := filepath.Join(t.TempDir(), "1.tar"), filepath.Join(t.TempDir(), "2.tar")
	d1, err := WriteArchive(rootfs, spec, out1)
	if err != nil {
		t.Fatalf("WriteArchive: %v", err)
	}
	d2, err := WriteArchive(rootfs, spec, out2)
	if err != nil {
		t.Fatalf("WriteArchive again: %v", err)
	}
	a1, _ := os.ReadFile(out1)
	a2, _ := os.ReadFile(out2)
	if d1 != d2 || !bytes.Equal(a1, a2) {
		t.Fatalf("archives differ between runs: digests %s and %s", d1, d2)
	}

	files := readArchive(t, a1)
	if got := string(files["oci-layout"]); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %s", got)
	}
	var idx index
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatalf("decode index.json: %v", err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != d1 {
		t.Fatalf("index manifests = %+v, want one with digest %s", idx.Manifests, d1)
	}
	wantAnn := map[string]string{annotationRefName: "1.0", annotationContainerdName: "example.com/tool:1.0"}
	if diff := cmp.Diff(wantAnn, idx.Manifests[0].Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	var man manifest
	if err := json.Unmarshal(blobOf(t, files, d1), &man); err != nil {
		t.Fatalf("decode manifest: %v", err)
	}
	var cfg imageConfig
	if err := json.Unmarshal(blobOf(t, files, man.Config.Digest), &cfg); err != nil {
		t.Fatalf("decode config: %v", err)
	}
	wantCfg := containerConfig{Entrypoint: []string{"/bin/tool"}, Cmd: []string{"-v"}, Env: []string{"A=B"}}
	if diff := cmp.Diff(wantCfg, cfg.Config); diff != "" {
		t.Errorf("container config (-want +got):\n%s", diff)
	}

	zr, err := gzip.NewReader(bytes.NewReader(blobOf(t, files, man.Layers[0].Digest)))
	if err != nil {
		t.Fatalf("open layer: %v", err)
	}
	layer, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("read layer: %v", err)
	}
	if got := digestOf(layer); len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != got {
		t.Errorf("diff_ids = %v, want [%s]", cfg.RootFS.DiffIDs, got)
	}
	var names []string
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read layer entry: %v", err)
		}
		if hdr.Uid != 0 || hdr.Gid != 0 || hdr.ModTime.Unix() != 0 {
			t.Errorf("%s: uid %d gid %d mtime %v, want 0 0 epoch", hdr.Name, hdr.Uid, hdr.Gid, hdr.ModTime)
		}
		names = append(names, hdr.Name+"->"+hdr.Linkname)
	}
	if diff := cmp.Diff([]string{"bin/->", "bin/alias->tool", "bin/tool->"}, names); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}
}
