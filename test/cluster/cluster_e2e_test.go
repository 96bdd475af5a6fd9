package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestControlPlane starts the real control plane and checks what berth
// relies on: a ready API server, a node identity with exactly a kubelet's
// rights, a working controller-manager and scheduler, and an API server
// that restarts on the same port and data.
func TestControlPlane(t *testing.T) {
	c := ForTest(t, Options{NodeNames: []string{"node-a"}})
	ctx := t.Context()

	t.Run("apiserver ready", func(t *testing.T) {
		out, err := c.Kubectl(ctx, "get", "--raw", "/readyz")
		if err != nil || strings.TrimSpace(out) != "ok" {
			t.Fatalf("GET /readyz = %q, %v; want ok", out, err)
		}
	})

	nodeKC, err := c.NodeKubeconfig("node-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("node rights", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"create", "nodes"}, "yes"},
			{[]string{"get", "nodes/node-a"}, "yes"},
			// Since v1.37 a node reads only its own Node object.
			{[]string{"get", "nodes"}, "no"},
			{[]string{"get", "nodes/node-b"}, "no"},
			{[]string{"patch", "nodes/node-a", "--subresource=status"}, "yes"},
			// Since v1.37 a node lists and watches pods only with a
			// spec.nodeName field selector.
			{[]string{"list", "pods", "-A"}, "no"},
			{[]string{"create", "leases", "-n", "kube-node-lease"}, "yes"},
			{[]string{"get", "secrets", "-A"}, "no"},
			{[]string{"create", "deployments"}, "no"},
		} {
			// can-i exits 1 when the answer is no; the answer, and for a
			// no the authorizer's reason, is on stdout.
			out, _ := c.KubectlAs(ctx, nodeKC, append([]string{"auth", "can-i"}, tc.args...)...)
			if got, _, _ := strings.Cut(strings.TrimSpace(out), " "); got != tc.want {
				t.Errorf("node-a: auth can-i %s = %q, want %q", strings.Join(tc.args, " "), out, tc.want)
			}
		}
	})

	t.Run("node restriction", func(t *testing.T) {
		if _, err := c.KubectlAs(ctx, nodeKC, "create", "-f", nodeManifest(t, "node-a")); err != nil {
			t.Fatalf("node-a creates its own Node: %v", err)
		}
		_, err := c.KubectlAs(ctx, nodeKC, "create", "-f", nodeManifest(t, "node-b"))
		if err == nil || !strings.Contains(err.Error(), `is not allowed to modify node "node-b"`) {
			t.Fatalf("node-a creates Node node-b: err = %v, want NodeRestriction's refusal", err)
		}
	})

	t.Run("controller-manager and scheduler", func(t *testing.T) {
		if _, err := c.Kubectl(ctx, "create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "--replicas=2"); err != nil {
			t.Fatal(err)
		}
		pods := waitPods(ctx, t, c, "app=web", 2)
		for _, p := range pods {
			if len(p.Metadata.OwnerReferences) != 1 || p.Metadata.OwnerReferences[0].Kind != "ReplicaSet" {
				t.Errorf("pod %s owners = %+v, want one ReplicaSet", p.Metadata.Name, p.Metadata.OwnerReferences)
			}
		}
	})

	t.Run("apiserver restart keeps data", func(t *testing.T) {
		if err := c.RestartAPIServer(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Kubectl(ctx, "get", "node", "node-a"); err != nil {
			t.Fatalf("Node node-a after restart: %v", err)
		}
	})
}

// nodeManifest writes a minimal Node and returns its path.
func nodeManifest(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name+".json")
	node := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q}}`, name)
	if err := os.WriteFile(path, []byte(node), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

type podList struct {
	Items []podItem `json:"items"`
}

type podItem struct {
	Metadata struct {
		Name            string `json:"name"`
		OwnerReferences []struct {
			Kind string `json:"kind"`
		} `json:"ownerReferences"`
	} `json:"metadata"`
	Status struct {
		Conditions []struct {
			Type string `json:"type"`
		} `json:"conditions"`
	} `json:"status"`
}

// waitPods waits until n pods match selector and the scheduler has set
// PodScheduled on each (True or, without a usable node, False).
func waitPods(ctx context.Context, t *testing.T, c *Cluster, selector string, n int) []podItem {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	ticker := time.NewTicker(500 * time.Millisecond)
	defer ticker.Stop()
	var last string
	for {
		out, err := c.Kubectl(ctx, "get", "pods", "-l", selector, "-o", "json")
		if err == nil {
			var l podList
			if err := json.Unmarshal([]byte(out), &l); err != nil {
				t.Fatalf("decode pods: %v", err)
			}
			if len(l.Items) == n && allScheduledOnce(l.Items) {
				return l.Items
			}
			last = fmt.Sprintf("%d pods", len(l.Items))
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			t.Fatalf("wait for %d pods with PodScheduled (%s): %v; last: %s", n, selector, ctx.Err(), last)
		case <-ticker.C:
		}
	}
}

func allScheduledOnce(pods []podItem) bool {
	for _, p := range pods {
		found := false
		for _, c := range p.Status.Conditions {
			found = found || c.Type == "PodScheduled"
		}
		if !found {
			return false
		}
	}
	return true
}
