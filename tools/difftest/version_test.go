package difftest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestSameUpstreamAsToolsKube: tools/kube/go.mod says which upstream
// berth follows; this module must compare berth with that same release.
func TestSameUpstreamAsToolsKube(t *testing.T) {
	const mod = "k8s.io/kubernetes"
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}}", mod)
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOPROXY=off", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("find the version of %s in tools/difftest/go.mod: %v", mod, err)
	}
	here := strings.TrimSpace(string(out))
	if want := upstreamsrc.New(t).Version(mod); here != want {
		t.Errorf("tools/difftest/go.mod has %s %s, tools/kube/go.mod %s: change both together", mod, here, want)
	}
}
