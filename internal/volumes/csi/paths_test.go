package csi

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestTargetDirEscapes: a volume name's "/" becomes "~", as upstream's
// EscapeQualifiedName; names that would leave their directory are
// refused.
func TestTargetDirEscapes(t *testing.T) {
	if got, want := TargetDir("/var/lib/kubelet/pods", "uid", "a/b"), "/var/lib/kubelet/pods/uid/volumes/kubernetes.io~csi/a~b/mount"; got != want {
		t.Errorf("TargetDir = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		uid, spec, driver string
		ok                bool
	}{
		{"uid", "pv-1", "csi.example.com", true},
		{"uid", "a/b", "csi.example.com", true},
		{"..", "pv-1", "csi.example.com", false},
		{"a/b", "pv-1", "csi.example.com", false},
		{"uid", ".", "csi.example.com", false},
		{"uid", "pv-1", "", false},
		{"uid", "pv-1", "..", false},
		{"uid", "pv\x00", "csi.example.com", false},
	} {
		if err := checkNames(types.UID(tc.uid), tc.spec, tc.driver); (err == nil) != tc.ok {
			t.Errorf("checkNames(%q, %q, %q) = %v, want ok %v", tc.uid, tc.spec, tc.driver, err, tc.ok)
		}
	}
}
