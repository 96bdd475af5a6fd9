package crifake

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/grpc/status"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
)

// resolveID finds the object whose ID is id or starts with id, as
// containerd's truncated-ID index does. No match is a NotFound error that
// isNotFound recognises; a prefix that matches several objects is an error.
func resolveID[T any](id string, objs map[string]T, kind string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("an error occurred when try to find %s %q: Prefix can't be empty", kind, id)
	}
	if _, ok := objs[id]; ok {
		return id, nil
	}
	var found []string
	for full := range objs {
		if strings.HasPrefix(full, id) {
			found = append(found, full)
		}
	}
	switch len(found) {
	case 0:
		return "", notFoundError{msg: fmt.Sprintf("an error occurred when try to find %s %q: not found", kind, id)}
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s ID prefix %q is ambiguous", kind, id)
}

// notFoundError is the fake's NotFound answer; it reaches the client as a
// NotFound gRPC status.
type notFoundError struct{ msg string }

func (e notFoundError) Error() string { return e.msg }

func (e notFoundError) GRPCStatus() *status.Status {
	return status.Convert(cri.StatusError(cri.ErrNotFound, e.msg))
}

func isNotFound(err error) bool {
	var nf notFoundError
	return errors.As(err, &nf)
}

// sandboxMatches applies a ListPodSandbox filter. Callers hold mu.
func (f *Fake) sandboxMatches(s *sandbox, flt *runtimeapi.PodSandboxFilter) bool {
	if flt == nil {
		return true
	}
	if flt.GetId() != "" && !strings.HasPrefix(s.id, flt.GetId()) {
		return false
	}
	if flt.GetState() != nil && flt.GetState().GetState() != s.state {
		return false
	}
	return labelsMatch(s.config.GetLabels(), flt.GetLabelSelector())
}

// containerMatches applies a ListContainers filter. Callers hold mu.
func (f *Fake) containerMatches(c *container, flt *runtimeapi.ContainerFilter) bool {
	if flt == nil {
		return true
	}
	if flt.GetId() != "" && !strings.HasPrefix(c.id, flt.GetId()) {
		return false
	}
	if flt.GetPodSandboxId() != "" && !strings.HasPrefix(c.sandboxID, flt.GetPodSandboxId()) {
		return false
	}
	if flt.GetState() != nil && flt.GetState().GetState() != c.state {
		return false
	}
	return labelsMatch(c.config.GetLabels(), flt.GetLabelSelector())
}

// labelsMatch reports whether labels has every key of selector with the
// same value.
func labelsMatch(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	return maps.Clone(m)
}

// sortedSandboxes returns the sandboxes oldest first. Callers hold mu.
func (f *Fake) sortedSandboxes() []*sandbox {
	out := slices.Collect(maps.Values(f.world.sandboxes))
	slices.SortFunc(out, func(a, b *sandbox) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// sortedContainers returns the containers oldest first. Callers hold mu.
func (f *Fake) sortedContainers() []*container {
	out := slices.Collect(maps.Values(f.world.containers))
	slices.SortFunc(out, func(a, b *container) int { return cmp.Compare(a.seq, b.seq) })
	return out
}
