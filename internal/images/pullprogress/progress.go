package pullprogress

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/berthk8s/berth/internal/platform/contentstore"
)

// Progress is one reading of a pull.
type Progress struct {
	// Known is false until the image's manifest is found: Done and Total
	// are then zero.
	Known bool
	// Done and Total are the bytes of the image's config and layers that
	// are on the node, and all of them.
	Done, Total int64
	// BytesPerSecond is the download rate, smoothed over the readings.
	BytesPerSecond float64
	// Blobs and BlobsDone count the config and layers, and those committed.
	Blobs, BlobsDone int
}

// Store is what a pull's reading needs of the runtime's content store
// (contentstore.Store). Implementations must be safe for concurrent use.
type Store interface {
	Ingests(ctx context.Context) ([]contentstore.Ingest, error)
	Labeled(ctx context.Context, key string) ([]contentstore.Blob, error)
	Info(ctx context.Context, digest string) (contentstore.Blob, bool, error)
	Read(ctx context.Context, digest string, limit int64) ([]byte, error)
}

// sourceLabel is the prefix of containerd's distribution source label,
// followed by the registry host (docker.AppendDistributionSourceLabel).
const sourceLabel = "containerd.io/distribution.source."

// Bounds of the manifest search: blobs larger than maxManifest are not
// read; at most maxReads candidates are read per reading (the newest
// first).
const (
	maxManifest = 4 << 20
	maxReads    = 16
	// createdSlack is how long before the pull's start a manifest counts
	// as committed by it: the runtime's clock and berth's are the host's,
	// read at different moments.
	createdSlack = 2 * time.Second
)

// blobRef is a manifest's descriptor of its config or a layer.
type blobRef struct {
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// manifest is the part of an OCI or Docker schema 2 image manifest a
// reading needs; an index has neither.
type manifest struct {
	Config blobRef   `json:"config"`
	Layers []blobRef `json:"layers"`
}

func (m *manifest) blobs() []blobRef { return append([]blobRef{m.Config}, m.Layers...) }

// parseManifest returns the image manifest in b, false if b is not one
// (an index, a layer, anything else).
func parseManifest(b []byte) (*manifest, bool) {
	var m manifest
	if json.Unmarshal(b, &m) != nil || m.Config.Digest == "" || len(m.Layers) == 0 {
		return nil, false
	}
	return &m, true
}

// pull is one pull's reading state, owned by its watch goroutine.
type pull struct {
	host, repo string
	since      time.Time
	manifest   *manifest
	// parsed holds the candidates read: their image manifest, nil for
	// blobs that are none (an index, a layer).
	parsed map[string]*manifest
	// committed holds the blobs of the manifest known to be committed.
	committed map[string]bool
	last      Progress
	lastAt    time.Time
}

// newPull starts the reading of a pull of repository ("<host>/<path>", as
// containerd names it: docker.io/library/busybox) that began at since.
func newPull(repository string, since time.Time) *pull {
	host, repo, _ := strings.Cut(repository, "/")
	return &pull{host: labelHost(host), repo: repo, since: since, parsed: map[string]*manifest{}, committed: map[string]bool{}}
}

// labelHost is the registry host as the distribution source label names
// it: without its port ("127.0.0.1:5000" is labeled "127.0.0.1"; containerd
// takes the reference's URL Hostname, a label key has no colon).
func labelHost(host string) string {
	return (&url.URL{Host: host}).Hostname()
}

// sample takes one reading at now.
func (p *pull) sample(ctx context.Context, s Store, now time.Time) (Progress, error) {
	ingests, err := s.Ingests(ctx)
	if err != nil {
		return Progress{}, err
	}
	if p.manifest == nil {
		if p.manifest, err = p.find(ctx, s, ingests); err != nil || p.manifest == nil {
			return Progress{}, err
		}
	}
	pr, err := p.count(ctx, s, ingests)
	if err != nil {
		return Progress{}, err
	}
	pr.BytesPerSecond = p.rate(pr.Done, now)
	p.last, p.lastAt = pr, now
	return pr, nil
}

// find returns the pull's image manifest, nil while it is not found.
func (p *pull) find(ctx context.Context, s Store, ingests []contentstore.Ingest) (*manifest, error) {
	key := sourceLabel + p.host
	blobs, err := s.Labeled(ctx, key)
	if err != nil {
		return nil, err
	}
	blobs = slices.DeleteFunc(blobs, func(b contentstore.Blob) bool {
		m, seen := p.parsed[b.Digest]
		return b.Size > maxManifest || (seen && m == nil) || !hasRepo(b.Labels[key], p.repo) || !hasChildren(b.Labels)
	})
	slices.SortFunc(blobs, func(a, b contentstore.Blob) int { return b.Created.Compare(a.Created) })
	downloading := map[string]bool{}
	for _, in := range ingests {
		downloading[ingestDigest(in.Ref)] = true
	}
	reads := 0
	for _, b := range blobs {
		m, seen := p.parsed[b.Digest]
		if !seen {
			if reads == maxReads {
				break
			}
			reads++
			data, err := s.Read(ctx, b.Digest, maxManifest)
			if err != nil {
				return nil, err
			}
			m, _ = parseManifest(data)
			p.parsed[b.Digest] = m // immutable: never read again
		}
		if m == nil {
			continue
		}
		if !b.Created.Before(p.since.Add(-createdSlack)) || slices.ContainsFunc(m.blobs(), func(r blobRef) bool { return downloading[r.Digest] }) {
			return m, nil
		}
	}
	return nil, nil
}

// count adds up the manifest's blobs: committed ones whole, downloading
// ones as far as they have got.
func (p *pull) count(ctx context.Context, s Store, ingests []contentstore.Ingest) (Progress, error) {
	offsets := map[string]int64{}
	for _, in := range ingests {
		offsets[ingestDigest(in.Ref)] = in.Offset
	}
	pr := Progress{Known: true}
	for _, b := range p.manifest.blobs() {
		pr.Blobs++
		pr.Total += b.Size
		if off, ok := offsets[b.Digest]; ok && !p.committed[b.Digest] {
			pr.Done += min(off, b.Size)
			continue
		}
		if !p.committed[b.Digest] {
			_, ok, err := s.Info(ctx, b.Digest)
			if err != nil {
				return Progress{}, err
			}
			p.committed[b.Digest] = ok
		}
		if p.committed[b.Digest] {
			pr.Done += b.Size
			pr.BlobsDone++
		}
	}
	return pr, nil
}

// rate returns the download rate at now, done bytes being on the node:
// 0 at the first reading (what was on the node before the pull is not a
// download), then the last interval's, averaged with the rate before it.
func (p *pull) rate(done int64, now time.Time) float64 {
	if !p.last.Known || !now.After(p.lastAt) {
		return p.last.BytesPerSecond
	}
	inst := float64(max(done-p.last.Done, 0)) / now.Sub(p.lastAt).Seconds()
	if p.last.BytesPerSecond == 0 {
		return inst
	}
	return (inst + p.last.BytesPerSecond) / 2
}

// hasRepo reports whether a distribution source label's value (repositories
// joined by commas) holds repo.
func hasRepo(value, repo string) bool {
	return slices.Contains(strings.Split(value, ","), repo)
}

// childLabel is the prefix of the labels containerd puts on a manifest or
// an index for each blob it refers to, before it fetches them
// (images.SetChildrenMappedLabels): layers and configs have none, so they
// are never read as candidates.
const childLabel = "containerd.io/gc.ref.content."

func hasChildren(labels map[string]string) bool {
	for k := range labels {
		if strings.HasPrefix(k, childLabel) {
			return true
		}
	}
	return false
}

// ingestDigest is the digest an ingest ref of a pull ends with
// ("layer-sha256:…"; remotes.MakeRefKey), or the ref itself.
func ingestDigest(ref string) string {
	if i := strings.LastIndex(ref, "sha256:"); i >= 0 {
		return ref[i:]
	}
	return ref
}
