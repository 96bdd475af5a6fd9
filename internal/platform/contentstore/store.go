package contentstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	contentapi "github.com/containerd/containerd/api/services/content/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// Namespace is containerd's namespace of the CRI plugin's images.
const Namespace = "k8s.io"

// namespaceHeader is the gRPC metadata key containerd reads the namespace
// from (containerd's namespaces.GRPCHeader).
const namespaceHeader = "containerd-namespace"

// Ingest is a download in progress: containerd's ingest ref (for a pull,
// "<kind>-<digest>", remotes.MakeRefKey), the bytes written so far and the
// size expected (0: unknown).
type Ingest struct {
	Ref    string
	Offset int64
	Total  int64
}

// Blob is a committed blob: its digest, size, when it was created and its
// labels.
type Blob struct {
	Digest  string
	Size    int64
	Created time.Time
	Labels  map[string]string
}

// Store reads containerd's content store. Safe for concurrent use; it does
// not own the connection.
type Store struct {
	client contentapi.ContentClient
}

// New returns a Store over conn, a connection to containerd's socket (the
// CRI client's image connection).
func New(conn grpc.ClientConnInterface) *Store {
	return &Store{client: contentapi.NewContentClient(conn)}
}

func withNamespace(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, namespaceHeader, Namespace)
}

// Ingests returns the downloads in progress.
func (s *Store) Ingests(ctx context.Context) ([]Ingest, error) {
	resp, err := s.client.ListStatuses(withNamespace(ctx), &contentapi.ListStatusesRequest{})
	if err != nil {
		return nil, fmt.Errorf("list content ingests: %w", err)
	}
	out := make([]Ingest, 0, len(resp.GetStatuses()))
	for _, st := range resp.GetStatuses() {
		out = append(out, Ingest{Ref: st.GetRef(), Offset: st.GetOffset(), Total: st.GetTotal()})
	}
	return out, nil
}

// Labeled returns the blobs that carry the label key, whatever its value.
func (s *Store) Labeled(ctx context.Context, key string) ([]Blob, error) {
	// containerd's filter syntax: a field path alone tests presence; a
	// quoted path element may hold any character.
	stream, err := s.client.List(withNamespace(ctx), &contentapi.ListContentRequest{Filters: []string{"labels." + strconv.Quote(key)}})
	if err != nil {
		return nil, fmt.Errorf("list content labeled %q: %w", key, err)
	}
	var out []Blob
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list content labeled %q: %w", key, err)
		}
		for _, info := range resp.GetInfo() {
			out = append(out, blob(info))
		}
	}
}

// Info returns the committed blob of digest; ok is false if there is none.
func (s *Store) Info(ctx context.Context, digest string) (Blob, bool, error) {
	resp, err := s.client.Info(withNamespace(ctx), &contentapi.InfoRequest{Digest: digest})
	if errors.Is(err, cri.ErrNotFound) {
		return Blob{}, false, nil
	}
	if err != nil {
		return Blob{}, false, fmt.Errorf("read content info %s: %w", digest, err)
	}
	return blob(resp.GetInfo()), true, nil
}

// Read returns the blob of digest, if it is at most limit bytes.
func (s *Store) Read(ctx context.Context, digest string, limit int64) ([]byte, error) {
	info, ok, err := s.Info(ctx, digest)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("read content %s: %w", digest, cri.ErrNotFound)
	case info.Size > limit:
		return nil, fmt.Errorf("read content %s: %d bytes, more than %d", digest, info.Size, limit)
	}
	stream, err := s.client.Read(withNamespace(ctx), &contentapi.ReadContentRequest{Digest: digest, Size: info.Size})
	if err != nil {
		return nil, fmt.Errorf("read content %s: %w", digest, err)
	}
	data := make([]byte, 0, info.Size)
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return data, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read content %s: %w", digest, err)
		}
		if int64(len(data)+len(resp.GetData())) > limit {
			return nil, fmt.Errorf("read content %s: more than %d bytes", digest, limit)
		}
		data = append(data, resp.GetData()...)
	}
}

func blob(info *contentapi.Info) Blob {
	b := Blob{Digest: info.GetDigest(), Size: info.GetSize(), Labels: info.GetLabels()}
	if c := info.GetCreatedAt(); c != nil {
		b.Created = c.AsTime()
	}
	return b
}
