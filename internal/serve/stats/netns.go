package stats

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// sandboxProc is what the network reader needs of a sandbox: its
// process, and whether it shares the node's network (no pod netns).
type sandboxProc struct {
	PID         int
	HostNetwork bool
}

// sandboxProcs caches each sandbox's process (a sandbox keeps its
// process for life), so a summary asks PodSandboxStatus once per new
// sandbox, not once per pod per request.
type sandboxProcs struct {
	mu sync.Mutex
	// byID is guarded by mu.
	byID map[string]sandboxProc
}

// get returns the cached processes of the ready sandboxes in ids, asking
// the runtime for the ones it lacks, and forgets every other sandbox.
func (c *sandboxProcs) get(ctx context.Context, rt Runtime, ids []string) map[string]sandboxProc {
	c.mu.Lock()
	prev := c.byID
	c.mu.Unlock()
	next := make(map[string]sandboxProc, len(ids))
	for _, id := range ids {
		if p, ok := prev[id]; ok {
			next[id] = p
			continue
		}
		p, err := sandboxProcOf(ctx, rt, id)
		if err != nil {
			klog.FromContext(ctx).V(4).Info("Cannot find the sandbox's process", "sandbox", id, "err", err)
			continue
		}
		next[id] = p
	}
	c.mu.Lock()
	c.byID = next
	c.mu.Unlock()
	return next
}

// sandboxProcOf reads the sandbox's process ID from PodSandboxStatus's
// verbose info ({"pid": N} under "info", as containerd answers) and its
// network namespace mode.
func sandboxProcOf(ctx context.Context, rt Runtime, id string) (sandboxProc, error) {
	resp, err := rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id, Verbose: true})
	if err != nil {
		return sandboxProc{}, fmt.Errorf("get sandbox status %q: %w", id, err)
	}
	hostNet := resp.GetStatus().GetLinux().GetNamespaces().GetOptions().GetNetwork() == runtimeapi.NamespaceMode_NODE
	pid, err := pidFromInfo(resp.GetInfo())
	if err != nil {
		return sandboxProc{}, fmt.Errorf("read sandbox %q process: %w", id, err)
	}
	return sandboxProc{PID: pid, HostNetwork: hostNet}, nil
}

// pidFromInfo parses the process ID from a sandbox's verbose info. It is
// pure.
func pidFromInfo(info map[string]string) (int, error) {
	var v struct {
		PID int `json:"pid"`
	}
	raw, ok := info["info"]
	if !ok {
		return 0, fmt.Errorf("no verbose info")
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return 0, fmt.Errorf("parse verbose info: %w", err)
	}
	if v.PID <= 0 {
		return 0, fmt.Errorf("no pid in verbose info")
	}
	return v.PID, nil
}

// podNetworks reads the network of every ready sandbox in its own netns
// from <proc>/<pid>/net/dev, by sandbox ID: for runtimes whose
// ListPodSandboxStats gives no network. Host-network pods have none, as
// upstream. /proc/<pid> is the kernel's, not the pod's, to write.
func (p *Provider) podNetworks(ctx context.Context, sandboxes []*runtimeapi.PodSandbox, now time.Time) map[string]*statsapi.NetworkStats {
	var ids []string
	for _, sb := range sandboxes {
		if sb.GetState() == runtimeapi.PodSandboxState_SANDBOX_READY {
			ids = append(ids, sb.GetId())
		}
	}
	out := map[string]*statsapi.NetworkStats{}
	for id, proc := range p.procs.get(ctx, p.cfg.Runtime, ids) {
		if proc.HostNetwork {
			continue
		}
		f, err := os.Open(filepath.Join(p.cfg.ProcRoot, strconv.Itoa(proc.PID), "net", "dev"))
		if err != nil {
			continue // the sandbox stopped since it was listed
		}
		n := networkFromInterfaces(parseNetDev(f))
		_ = f.Close()
		if n != nil {
			n.Time = metav1.NewTime(now)
			out[id] = n
		}
	}
	return out
}
