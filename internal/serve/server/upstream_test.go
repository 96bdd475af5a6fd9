package server

import (
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestUserNamesMatchUpstream pins the well-known user and group names to
// k8s.io/apiserver's, which berth does not import.
func TestUserNamesMatchUpstream(t *testing.T) {
	const user = "k8s.io/apiserver/pkg/authentication/user"
	src := upstreamsrc.New(t)
	for _, tt := range []struct{ berth, name string }{
		{AnonymousUser, "Anonymous"},
		{UnauthenticatedGrp, "AllUnauthenticated"},
		{AuthenticatedGroup, "AllAuthenticated"},
	} {
		if up := src.Value(user, tt.name).AsString(); up != tt.berth {
			t.Errorf("berth %q, upstream %s.%s %q", tt.berth, user, tt.name, up)
		}
	}
}
