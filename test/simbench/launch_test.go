package simbench

import (
	"strings"
	"testing"
)

func TestHollowRoot(t *testing.T) {
	for _, tc := range []struct{ name, log, want string }{
		{"its log line", "I1203 version\nI1203 12:04:15.259 7929 hollow_kubelet.go:153] Using /tmp/hollow-kubelet.1188134016 as root dir for hollow-kubelet\n",
			"/tmp/hollow-kubelet.1188134016"},
		{"no such line", "I1203 version\n", ""},
		{"another directory", "Using /etc as root dir for hollow-kubelet", ""},
		{"a path that leaves /tmp/hollow-kubelet.N", "Using /tmp/hollow-kubelet.1/../x as root dir for hollow-kubelet", ""},
	} {
		if got := hollowRoot([]byte(tc.log)); got != tc.want {
			t.Errorf("%s: hollowRoot = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestKwokNode checks that the harness's Nodes carry the annotation kwok
// is started to manage.
func TestKwokNode(t *testing.T) {
	n := kwokNode("sb-kwok-3")
	key, value, _ := strings.Cut(kwokSelector, "=")
	if n.Annotations[key] != value || n.Name != "sb-kwok-3" {
		t.Errorf("kwokNode: name %q, annotations %v; want %s", n.Name, n.Annotations, kwokSelector)
	}
	if got := n.Status.Capacity.Pods().String(); got != nodePods {
		t.Errorf("kwokNode: %s pods, want %s", got, nodePods)
	}
}
