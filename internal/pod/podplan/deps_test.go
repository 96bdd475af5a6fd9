package podplan

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure holds the line on what the planner may depend on: no RPC, no
// client, no processes, no clock, no logging, no randomness. net/http
// arrives transitively through k8s.io/apimachinery, so it (like os) is
// checked among the direct imports only.
func TestPure(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found")
	}
	list := func(args ...string) []string {
		out, err := exec.Command(goBin, append([]string{"list"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %v: %v\n%s", args, err, out)
		}
		return strings.Fields(string(out))
	}
	forbid := func(pkgs, forbidden []string) {
		for _, pkg := range pkgs {
			for _, f := range forbidden {
				if pkg == f || strings.HasPrefix(pkg, f+"/") {
					t.Errorf("podplan depends on %s", pkg)
				}
			}
		}
	}
	forbid(list("-deps", "."), []string{
		"google.golang.org/grpc", "os/exec", "k8s.io/client-go", "k8s.io/cri-api", "k8s.io/kubernetes", "k8s.io/utils/clock",
	})
	forbid(list("-f", `{{join .Imports " "}}`, "."), []string{
		"net/http", "os", "k8s.io/klog/v2", "math/rand", "math/rand/v2",
	})
}
