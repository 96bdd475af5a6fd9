package server

import (
	"strings"
	"testing"
)

// FuzzRequestAttributes: RequestAttributes never panics and answers one
// or two checks about the node with the request's user, verb and path;
// two only as a fine-grained subresource (pods, healthz, configz) falling
// back to nodes/proxy; and exec, attach, portForward, run and
// containerLogs always need nodes/proxy and nothing else. The comparison
// with upstream's table is in tools/difftest.
func FuzzRequestAttributes(f *testing.F) {
	u := &User{Name: "alice"}
	known := map[string]bool{"pods": true, "healthz": true, "configz": true, "statusz": true,
		"stats": true, "metrics": true, "log": true, "checkpoint": true, "proxy": true}
	f.Fuzz(func(t *testing.T, method, path string) {
		got := RequestAttributes(u, method, path, "node-1")
		if len(got) != 1 && len(got) != 2 {
			t.Fatalf("%s %q: %d checks: %+v", method, path, len(got), got)
		}
		for _, a := range got {
			if a.User != u || a.Verb != apiVerb(method) || a.Resource != "nodes" || a.Name != "node-1" || a.Path != path || !known[a.Subresource] {
				t.Fatalf("%s %q: check %+v", method, path, a)
			}
		}
		if len(got) == 2 {
			if first := got[0].Subresource; got[1].Subresource != "proxy" || (first != "pods" && first != "healthz" && first != "configz") {
				t.Fatalf("%s %q: checks %+v, want a fine-grained one then proxy", method, path, got)
			}
		}
		for _, prefix := range []string{"/exec/", "/attach/", "/portForward/", "/run/", "/containerLogs/"} {
			if strings.HasPrefix(path, prefix) && (len(got) != 1 || got[0].Subresource != "proxy") {
				t.Fatalf("%s %q: checks %+v, want nodes/proxy only", method, path, got)
			}
		}
	})
}
