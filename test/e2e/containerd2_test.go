package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/test/cluster"
)

// containerd2 is a private containerd 2.x (tools/containerd2, built by
// `make cluster-tools` or `make containerd2`): its own root, state, socket,
// shim sockets, runc root and config under one temporary directory, never
// the host's /run/containerd or /var/lib/containerd; the host's CNI
// network (hack/node-setup.sh), so its pods get addresses as the shared
// containerd's do.
type containerd2 struct {
	dir      string
	endpoint string
	client   *cri.Client
}

// containerd2Config returns the private instance's configuration: the one
// hack/node-setup.sh writes for BERTH_CONTAINERD=2 (containerd2_config),
// with every path under dir (its root under dir/root; state, shim
// sockets and runc root under dir itself), so the tests run containerd 2
// as make's node set-up does.
func containerd2Config(t *testing.T, dir string) []byte {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "..", "hack", "node-setup.sh"))
	must(t, err)
	cmd := exec.Command("bash", "-c", `source "$1" && C2_ROOT=$2 && containerd2_config`, "bash", script, filepath.Join(dir, "root"))
	cmd.Env = append(os.Environ(), "BERTH_CONTAINERD=2", "CONTAINERD_SOCK="+filepath.Join(dir, "containerd.sock"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("containerd2_config of hack/node-setup.sh: %v", err)
	}
	return out
}

// startContainerd2 starts a private containerd 2.x, imports the test
// images into it and returns it. t.Cleanup removes every pod it holds,
// stops it (SIGTERM, then SIGKILL after 20 s), waits for it and removes
// its directory; it also dies with the test binary.
func startContainerd2(t *testing.T) *containerd2 {
	t.Helper()
	requireE2E(t)
	bin, err := cluster.ResolveBinDir("")
	must(t, err)
	binary := filepath.Join(bin, "containerd2")
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("containerd 2 is not built (run `make containerd2`): %v", err)
	}
	// Short: shim socket directories must fit in 42 bytes.
	dir, err := os.MkdirTemp("", "ctrd2-")
	must(t, err)
	c := &containerd2{dir: dir, endpoint: "unix://" + filepath.Join(dir, "containerd.sock")}
	must(t, os.WriteFile(filepath.Join(dir, "config.toml"), containerd2Config(t, dir), 0o644))
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	must(t, err)
	cmd := exec.Command(binary, "--config", filepath.Join(dir, "config.toml"))
	// Its own shim first: the host's belongs to containerd 1.6.
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(t, cmd.Start())
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	t.Cleanup(func() { c.stop(t, cmd, exited) })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		if c.client == nil {
			c.client, _ = cri.Dial(ctx, cri.Options{RuntimeEndpoint: c.endpoint, Timeout: 10 * time.Second})
		}
		if c.client != nil {
			if _, err := c.client.Runtime.Version(ctx, &runtimeapi.VersionRequest{}); err == nil {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("containerd 2 exited at start; log: %s", c.log())
		case <-ctx.Done():
			t.Fatalf("containerd 2 did not answer within a minute; log: %s", c.log())
		case <-time.After(100 * time.Millisecond):
		}
	}
	c.importImages(t)
	return c
}

// importImages imports the test images hack/images.sh built into the
// k8s.io namespace, with the host's ctr.
func (c *containerd2) importImages(t *testing.T) {
	t.Helper()
	images, err := filepath.Abs(filepath.Join("..", "..", "_output", "images"))
	must(t, err)
	for _, name := range []string{"pause", "busybox"} {
		archive := filepath.Join(images, name, "image.tar")
		out, err := exec.Command("ctr", "--address", strings.TrimPrefix(c.endpoint, "unix://"), "-n", "k8s.io", "images", "import", archive).CombinedOutput()
		if err != nil {
			t.Fatalf("import %s into containerd 2 (run `make node`): %v: %s", archive, err, out)
		}
	}
}

func (c *containerd2) log() string {
	data, _ := os.ReadFile(filepath.Join(c.dir, "containerd.log"))
	return string(data)
}

// stop removes every pod of the private containerd (berth stops without
// tearing pods down), then stops it, waits for it, unmounts what it left
// under its directory and removes the directory.
func (c *containerd2) stop(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}) {
	if c.client != nil {
		if err := c.removePods(); err != nil {
			t.Errorf("remove the pods of containerd 2: %v", err)
		}
		c.client.Close()
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	if t.Failed() {
		t.Logf("containerd 2 log:\n%s", c.log())
	}
	unmountUnder(t, c.dir)
	if err := os.RemoveAll(c.dir); err != nil {
		t.Logf("remove %s: %v", c.dir, err)
	}
}

func (c *containerd2) removePods() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := c.client.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return fmt.Errorf("list pod sandboxes: %w", err)
	}
	var errs []error
	for _, sb := range resp.Items {
		if _, err := c.client.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stop pod sandbox %q: %w", sb.Id, err))
		}
		if _, err := c.client.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Errorf("remove pod sandbox %q: %w", sb.Id, err))
		}
	}
	return errors.Join(errs...)
}
