package transient

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/internal/volumes/objectcache"
	"github.com/berthk8s/berth/internal/volumes/podcert"
)

func TestIs(t *testing.T) {
	sa := schema.GroupResource{Resource: "serviceaccounts"}
	cm := schema.GroupResource{Resource: "configmaps"}
	forbidden := apierrors.NewForbidden(sa, "default", errors.New(`no relationship found between node "n1" and this object`))
	tests := []struct {
		name   string
		err    error
		recent bool
		want   bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "forbidden of a recent pod", err: forbidden, recent: true, want: true},
		{name: "forbidden of an older pod", err: forbidden, recent: false, want: false},
		{name: "wrapped forbidden of a recent pod", err: fmt.Errorf("request token: %w", forbidden), recent: true, want: true},
		{name: "configMap not found for a recent pod", err: apierrors.NewNotFound(cm, "kube-root-ca.crt"), recent: true, want: true},
		{name: "configMap not found for an older pod", err: apierrors.NewNotFound(cm, "cfg"), recent: false, want: false},
		{name: "secret not found for a recent pod", err: apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, "tls"), recent: true, want: true},
		{name: "service account not found", err: apierrors.NewNotFound(sa, "default"), recent: true, want: false},
		{name: "bound pod not found for a recent pod", err: fmt.Errorf("request token: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web")), recent: true, want: true},
		{name: "bound pod not yet in NodeRestriction's informer", err: fmt.Errorf("request token: %w", apierrors.NewNotFound(schema.GroupResource{Resource: "pod"}, "web")), recent: true, want: true},
		{name: "bound pod not found for an older pod", err: apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "web"), recent: false, want: false},
		{name: "too many requests", err: apierrors.NewTooManyRequests("slow down", 1), want: true},
		{name: "service unavailable", err: apierrors.NewServiceUnavailable("starting"), want: true},
		{name: "internal error", err: apierrors.NewInternalError(errors.New("etcd")), want: true},
		{name: "server timeout", err: apierrors.NewServerTimeout(sa, "create", 1), want: true},
		{name: "timeout", err: apierrors.NewTimeoutError("slow", 1), want: true},
		{name: "unauthorized", err: apierrors.NewUnauthorized("who"), recent: true, want: false},
		{name: "invalid", err: apierrors.NewBadRequest("bad"), recent: true, want: false},
		{name: "watch not synced", err: fmt.Errorf("get configmap: %w", objectcache.ErrNotSynced), want: true},
		{name: "pod certificate not issued yet", err: fmt.Errorf("volume \"creds\": %w", podcert.ErrNotIssued), want: true},
		{name: "runtime deadline", err: fmt.Errorf("cri RunPodSandbox: %w", cri.ErrDeadlineExceeded), want: true},
		{name: "runtime unavailable", err: fmt.Errorf("cri ListContainers: %w", cri.ErrUnavailable), want: true},
		{name: "sandbox name still reserved in the runtime", err: fmt.Errorf("create pod sandbox: %w", cri.ErrInProgress), want: true},
		{name: "runtime not found", err: fmt.Errorf("cri ContainerStatus: %w", cri.ErrNotFound), want: false},
		{name: "cancelled", err: context.Canceled, want: false},
		{name: "cancelled while not synced", err: errors.Join(context.Canceled, objectcache.ErrNotSynced), want: false},
		{name: "plain error", err: errors.New("disk full"), recent: true, want: false},
		{name: "a wait on the cluster, of an older pod", err: Waiting(errors.New("PVC is not bound")), want: true},
		{name: "a wait, wrapped and joined", err: errors.Join(errors.New("disk full"), fmt.Errorf("volume \"data\": %w", Waiting(errors.New("PVC is not bound")))), want: true},
		{name: "a wait cancelled", err: errors.Join(context.Canceled, Waiting(errors.New("PVC is not bound"))), want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Is(tt.err, tt.recent); got != tt.want {
				t.Errorf("Is(%v, %v) = %v, want %v", tt.err, tt.recent, got, tt.want)
			}
		})
	}
}

// TestWaiting: the mark keeps the message and the chain (an API status
// under it is still found), and marks nothing.
func TestWaiting(t *testing.T) {
	if Waiting(nil) != nil {
		t.Error("Waiting(nil) is not nil")
	}
	nf := apierrors.NewNotFound(schema.GroupResource{Resource: "persistentvolumeclaims"}, "data")
	err := fmt.Errorf("error processing PVC ns/data: %w", Waiting(nf))
	if want := `error processing PVC ns/data: persistentvolumeclaims "data" not found`; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	if !apierrors.IsNotFound(err) {
		t.Error("the API status under the mark is lost")
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{err, true},
		{errors.Join(errors.New("disk full"), err), true},
		{errors.Join(context.Canceled, err), false},
		{nf, false},
		{fmt.Errorf("get: %w", objectcache.ErrNotSynced), false},
		{nil, false},
	} {
		if got := IsWaiting(tc.err); got != tc.want {
			t.Errorf("IsWaiting(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRecent(t *testing.T) {
	seen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		seen time.Time
		now  time.Time
		want bool
	}{
		{name: "just seen", seen: seen, now: seen, want: true},
		{name: "inside the window", seen: seen, now: seen.Add(ForbiddenWindow - time.Nanosecond), want: true},
		{name: "at the window's end", seen: seen, now: seen.Add(ForbiddenWindow), want: false},
		{name: "never seen", now: seen, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Recent(tt.seen, tt.now); got != tt.want {
				t.Errorf("Recent(%v, %v) = %v, want %v", tt.seen, tt.now, got, tt.want)
			}
		})
	}
}

// TestIsNodeRestrictionNotFound: the NodeRestriction admission plugin
// looks a token's pod up in client-go's pod lister, whose NotFound names
// the resource "pod"; right after the pod was created that answer is
// transient like the API server's own "pods" one.
func TestIsNodeRestrictionNotFound(t *testing.T) {
	lister := corev1listers.NewPodLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}))
	_, err := lister.Pods("default").Get("web")
	if !apierrors.IsNotFound(err) {
		t.Fatalf("lister Get of a missing pod = %v, want NotFound", err)
	}
	if !Is(fmt.Errorf("request token: %w", err), true) {
		t.Errorf("Is(%v, recent) = false, want true", err)
	}
}
