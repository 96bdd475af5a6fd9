package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/platform/cri"
	"github.com/berthk8s/berth/test/cluster"
)

const (
	nodeName     = "berth-e2e"
	busybox      = "docker.io/library/busybox:1.36"
	criEndpoint  = "unix:///run/containerd/containerd.sock"
	waitTimeout  = 2 * time.Minute
	pollInterval = 250 * time.Millisecond
)

// berthBinary is built once by TestMain when the suite is enabled.
var berthBinary string

func TestMain(m *testing.M) {
	if os.Getenv("BERTH_E2E") != "1" {
		fmt.Println("e2e: skipped (set BERTH_E2E=1 after `make node`, as `make test` does)")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "berth-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	berthBinary = filepath.Join(dir, "berth")
	build := exec.Command("go", "build", "-race", "-o", berthBinary, "github.com/berthk8s/berth/cmd/berth")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: build berth:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// defaultEviction is the test nodes' evictionHard, the development
// cluster's: upstream's memory threshold and disk thresholds far below
// upstream's (see cluster.SharedHostEviction). The eviction tests replace
// it (setEviction).
const defaultEviction = cluster.SharedHostEviction

// setEviction replaces defaultEviction in the node's configuration with
// block (an evictionHard map, and any other fields); before start.
func (n *node) setEviction(block string) {
	raw, err := os.ReadFile(n.config)
	must(n.t, err)
	if !strings.Contains(string(raw), defaultEviction) {
		n.t.Fatalf("%s lacks the default eviction block", n.config)
	}
	must(n.t, os.WriteFile(n.config, []byte(strings.Replace(string(raw), defaultEviction, block, 1)), 0o644))
}

// node is one berth process with its own manifest and root directories.
type node struct {
	t         *testing.T
	manifests string
	rootDir   string
	config    string
	port      int
	logPath   string
	cmd       *exec.Cmd
	exited    chan struct{}
	// extraArgs are added to berth's command line (e.g. --kubeconfig).
	extraArgs []string
}

func requireE2E(t *testing.T) {
	t.Helper()
	if berthBinary == "" {
		t.Skip("BERTH_E2E is not 1: real containerd tests are disabled")
	}
}

// newNode prepares directories and a config; start runs berth. extraConfig
// lines are appended to the KubeletConfiguration.
func newNode(t *testing.T, extraConfig ...string) *node {
	t.Helper()
	requireE2E(t)
	dir := t.TempDir()
	n := &node{
		t:         t,
		manifests: filepath.Join(dir, "manifests"),
		rootDir:   filepath.Join(dir, "root"),
		config:    filepath.Join(dir, "kubelet.yaml"),
		port:      freePort(t),
		logPath:   filepath.Join(dir, "berth.log"),
	}
	must(t, os.MkdirAll(n.manifests, 0o755))
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
staticPodPath: %s
fileCheckFrequency: 2s
readOnlyPort: %d
address: 127.0.0.1
healthzPort: 0
containerRuntimeEndpoint: %s
cgroupDriver: cgroupfs
failCgroupV1: false
# The tests share the host: leave its iptables alone (internal/platform/iptables
# tests the chains in a network namespace of its own).
makeIPTablesUtilChains: false
# Standalone: no kubelet API (its webhook auth needs an API client, as
# upstream); startClusterEnv turns it on with a --config-dir drop-in.
enableServer: false
authentication:
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
# Every e2e run shares containerd and its imported test images: no image
# GC, whatever the disk usage (it is tested against the fake CRI).
imageGCHighThresholdPercent: 100
%s`, n.manifests, n.port, criEndpoint, defaultEviction) + strings.Join(extraConfig, "\n")
	must(t, os.WriteFile(n.config, []byte(cfg), 0o644))
	t.Cleanup(func() {
		if t.Failed() {
			n.dumpLog()
		}
		keepLog(t, n.logPath)
		// berth stops without tearing pods down, as the kubelet does: a
		// tmpfs volume of a pod still running would keep the temporary
		// directory from being removed.
		unmountUnder(t, n.rootDir)
	})
	return n
}

// keepLog copies berth's log to $BERTH_E2E_KEEP_LOGS/<test>.log when that
// is set, passed or failed, to read what berth did in a test (its
// temporary directory goes with the test).
func keepLog(t *testing.T, path string) {
	dir := os.Getenv("BERTH_E2E_KEEP_LOGS")
	if dir == "" {
		return
	}
	data, err := os.ReadFile(path)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".log"), data, 0o644)
	}
	if err != nil {
		t.Logf("keep berth's log: %v", err)
	}
}

// unmountUnder unmounts every mount below dir, deepest first.
func unmountUnder(t *testing.T, dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var targets []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			targets = append(targets, fields[4])
		}
	}
	for i := len(targets) - 1; i >= 0; i-- {
		if err := syscall.Unmount(targets[i], syscall.MNT_DETACH); err != nil {
			t.Logf("unmount %s: %v", targets[i], err)
		}
	}
}

func (n *node) start() {
	n.t.Helper()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	must(n.t, err)
	// Each node has its own device plugin directory: the host's fixed one
	// is for the one kubelet a real host runs (TestDevicePlugin binds a
	// node's over it).
	args := append([]string{"--config", n.config, "--root-dir", n.rootDir, "--hostname-override", nodeName,
		"--device-plugin-dir", filepath.Join(n.rootDir, "device-plugins"), "-v", "4"}, n.extraArgs...)
	n.cmd = exec.Command(berthBinary, args...)
	n.cmd.Stdout, n.cmd.Stderr = logf, logf
	// berth dies with the test binary: an orphaned berth would keep
	// removing other tests' pods (and hold the e2e lock it inherited).
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	must(n.t, n.cmd.Start())
	n.exited = make(chan struct{})
	go func() {
		_ = n.cmd.Wait()
		logf.Close()
		close(n.exited)
	}()
	n.t.Cleanup(n.stop)
	n.waitFor("berth healthy", func() bool {
		resp, err := http.Get(n.url("/healthz"))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// stop sends SIGTERM and waits for berth to exit.
func (n *node) stop() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	select {
	case <-n.exited:
		return
	default:
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(30 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
		n.t.Errorf("berth did not exit within 30s of SIGTERM")
	}
}

func (n *node) url(path string) string { return fmt.Sprintf("http://127.0.0.1:%d%s", n.port, path) }

// writeManifest writes a static pod manifest atomically.
func (n *node) writeManifest(file, content string) {
	n.t.Helper()
	tmp := filepath.Join(n.manifests, "."+file+".tmp")
	must(n.t, os.WriteFile(tmp, []byte(content), 0o644))
	must(n.t, os.Rename(tmp, filepath.Join(n.manifests, file)))
}

func (n *node) removeManifest(file string) {
	n.t.Helper()
	must(n.t, os.Remove(filepath.Join(n.manifests, file)))
}

// pods reads GET /pods from the read-only port.
func (n *node) pods() ([]corev1.Pod, error) {
	resp, err := http.Get(n.url("/pods"))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list corev1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitPod waits until the pod named name (the static pod's full name)
// satisfies cond, and returns it.
func (n *node) waitPod(name, what string, cond func(p *corev1.Pod) bool) *corev1.Pod {
	n.t.Helper()
	var found *corev1.Pod
	n.waitFor(fmt.Sprintf("pod %s %s", name, what), func() bool {
		pods, err := n.pods()
		if err != nil {
			return false
		}
		for i := range pods {
			if pods[i].Name == name && cond(&pods[i]) {
				found = &pods[i]
				return true
			}
		}
		return false
	})
	return found
}

// waitNoPod waits until /pods no longer lists name.
func (n *node) waitNoPod(name string) {
	n.t.Helper()
	n.waitFor("pod "+name+" gone from /pods", func() bool {
		pods, err := n.pods()
		if err != nil {
			return false
		}
		for _, p := range pods {
			if p.Name == name {
				return false
			}
		}
		return true
	})
}

// waitFor polls cond until it holds; the bound is a failure guard only.
// slowWait is how long a wait takes before waitFor logs it.
const slowWait = 2 * time.Second

func (n *node) waitFor(what string, cond func() bool) {
	n.t.Helper()
	began := time.Now()
	deadline := began.Add(waitTimeout)
	// Long waits are logged (go test -v), so that where a test's time
	// goes can be read off a run.
	defer func() {
		if d := time.Since(began); d >= slowWait {
			n.t.Logf("waited %s for %s", d.Round(100*time.Millisecond), what)
		}
	}()
	for !cond() {
		select {
		case <-n.exited:
			n.t.Fatalf("berth exited while waiting for %s", what)
		default:
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("timed out after %s waiting for %s", waitTimeout, what)
		}
		time.Sleep(pollInterval)
	}
}

func (n *node) dumpLog() {
	data, err := os.ReadFile(n.logPath)
	if err != nil {
		return
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > 200 {
		lines = lines[len(lines)-200:]
	}
	n.t.Logf("berth log (last %d lines):\n%s", len(lines), strings.Join(lines, "\n"))
}

func running(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil {
			return false
		}
	}
	return len(p.Status.ContainerStatuses) > 0
}

// runtimeClient connects to containerd's CRI for inspection.
func runtimeClient(t *testing.T) *cri.Client {
	t.Helper()
	c, err := cri.Dial(context.Background(), cri.Options{RuntimeEndpoint: criEndpoint, Timeout: 30 * time.Second})
	must(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// runtimeObjects lists the sandboxes and containers containerd holds for uid.
func runtimeObjects(t *testing.T, c *cri.Client, uid string) ([]*runtimeapi.PodSandbox, []*runtimeapi.Container) {
	t.Helper()
	ctx := context.Background()
	sel := map[string]string{"io.kubernetes.pod.uid": uid}
	sb, err := c.Runtime.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{Filter: &runtimeapi.PodSandboxFilter{LabelSelector: sel}})
	must(t, err)
	cs, err := c.Runtime.ListContainers(ctx, &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: sel}})
	must(t, err)
	return sb.Items, cs.Containers
}

func httpGet(url string) (string, error) {
	client := http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	return b.String(), err
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
