package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Media types and annotations of the OCI image spec and of containerd.
const (
	mediaTypeIndex    = "application/vnd.oci.image.index.v1+json"
	mediaTypeManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaTypeConfig   = "application/vnd.oci.image.config.v1+json"
	mediaTypeLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"

	annotationRefName        = "org.opencontainers.image.ref.name"
	annotationContainerdName = "io.containerd.image.name"
)

// Spec describes the image to write around a root filesystem.
type Spec struct {
	Name       string // full reference with a tag, e.g. registry.k8s.io/pause:3.10.1
	Arch       string // GOARCH-style architecture, e.g. amd64
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	User       string
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type imageConfig struct {
	Architecture string          `json:"architecture"`
	OS           string          `json:"os"`
	Config       containerConfig `json:"config"`
	RootFS       rootFS          `json:"rootfs"`
}

type containerConfig struct {
	User       string   `json:"User,omitempty"`
	Env        []string `json:"Env,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
}

type rootFS struct {
	Type    string   `json:"type"`
	DiffIDs []string `json:"diff_ids"`
}

type manifest struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        descriptor   `json:"config"`
	Layers        []descriptor `json:"layers"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

// blob is one content-addressed file of the layout.
type blob struct {
	desc descriptor
	data []byte
}

func newBlob(mediaType string, data []byte) blob {
	return blob{desc: descriptor{MediaType: mediaType, Digest: digestOf(data), Size: int64(len(data))}, data: data}
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// WriteArchive packs rootfs as the only layer of the image described by spec
// and writes an OCI image-layout tar to out. It returns the manifest digest.
func WriteArchive(rootfs string, spec Spec, out string) (string, error) {
	name, tag, err := splitTag(spec.Name)
	if err != nil {
		return "", err
	}
	layerTar, err := tarDir(rootfs)
	if err != nil {
		return "", err
	}
	layerGz, err := gzipBytes(layerTar)
	if err != nil {
		return "", err
	}
	layer := newBlob(mediaTypeLayer, layerGz)
	cfgJSON, err := json.Marshal(imageConfig{
		Architecture: spec.Arch,
		OS:           "linux",
		Config: containerConfig{
			User: spec.User, Env: spec.Env, Entrypoint: spec.Entrypoint, Cmd: spec.Cmd, WorkingDir: spec.WorkingDir,
		},
		RootFS: rootFS{Type: "layers", DiffIDs: []string{digestOf(layerTar)}},
	})
	if err != nil {
		return "", fmt.Errorf("encode image config: %w", err)
	}
	cfg := newBlob(mediaTypeConfig, cfgJSON)
	manJSON, err := json.Marshal(manifest{
		SchemaVersion: 2, MediaType: mediaTypeManifest, Config: cfg.desc, Layers: []descriptor{layer.desc},
	})
	if err != nil {
		return "", fmt.Errorf("encode manifest: %w", err)
	}
	man := newBlob(mediaTypeManifest, manJSON)
	entry := man.desc
	entry.Annotations = map[string]string{annotationRefName: tag, annotationContainerdName: name + ":" + tag}
	entry.Platform = &platform{Architecture: spec.Arch, OS: "linux"}
	idxJSON, err := json.Marshal(index{SchemaVersion: 2, MediaType: mediaTypeIndex, Manifests: []descriptor{entry}})
	if err != nil {
		return "", fmt.Errorf("encode index: %w", err)
	}
	if err := writeLayout(out, idxJSON, []blob{layer, cfg, man}); err != nil {
		return "", err
	}
	return man.desc.Digest, nil
}

// splitTag splits "repo/name:tag" into name and tag; a missing tag is "latest".
func splitTag(ref string) (name, tag string, err error) {
	if ref == "" || strings.ContainsAny(ref, " @") {
		return "", "", fmt.Errorf("parse image name %q: want NAME[:TAG] without digest", ref)
	}
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, "latest", nil
	}
	if i == len(ref)-1 {
		return "", "", fmt.Errorf("parse image name %q: empty tag", ref)
	}
	return ref[:i], ref[i+1:], nil
}

// tarDir returns a reproducible tar of dir: entries in lexical order, owned by
// 0:0, dated at the Unix epoch.
func tarDir(dir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		return addEntry(tw, path, filepath.ToSlash(rel), d)
	})
	if err != nil {
		return nil, fmt.Errorf("pack rootfs %q: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("pack rootfs %q: %w", dir, err)
	}
	return buf.Bytes(), nil
}

func addEntry(tw *tar.Writer, path, name string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	var link string
	switch mode := info.Mode(); {
	case mode.IsDir(), mode.IsRegular():
	case mode&fs.ModeSymlink != 0:
		if link, err = os.Readlink(path); err != nil {
			return err
		}
	default:
		return fmt.Errorf("add %q: unsupported file type %v", name, mode.Type())
	}
	hdr, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	hdr.Name = name
	if info.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uid, hdr.Gid, hdr.Uname, hdr.Gname = 0, 0, "", ""
	hdr.ModTime, hdr.AccessTime, hdr.ChangeTime = time.Unix(0, 0), time.Time{}, time.Time{}
	hdr.Devmajor, hdr.Devminor = 0, 0
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = tw.Write(data)
	return err
}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(data); err != nil {
		return nil, fmt.Errorf("compress layer: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress layer: %w", err)
	}
	return buf.Bytes(), nil
}

// writeLayout writes the OCI image-layout tar atomically: a temporary file in
// the same directory, renamed over out once complete.
func writeLayout(out string, indexJSON []byte, blobs []blob) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".mkimage-*")
	if err != nil {
		return fmt.Errorf("create archive %q: %w", out, err)
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	defer tmp.Close()
	type file struct {
		name string
		data []byte
	}
	files := []file{{"oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)}}
	for _, b := range blobs {
		files = append(files, file{"blobs/sha256/" + strings.TrimPrefix(b.desc.Digest, "sha256:"), b.data})
	}
	files = append(files, file{"index.json", indexJSON})
	tw := tar.NewWriter(tmp)
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
			return fmt.Errorf("write archive %q: %w", out, err)
		}
	}
	for _, f := range files {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: 0o644, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write archive %q: %w", out, err)
		}
		if _, err := tw.Write(f.data); err != nil {
			return fmt.Errorf("write archive %q: %w", out, err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("write archive %q: %w", out, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("write archive %q: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write archive %q: %w", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("write archive %q: %w", out, err)
	}
	return nil
}
