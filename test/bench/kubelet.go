package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Kubelet is one kubelet under test: berth or the upstream kubelet.
type Kubelet struct {
	Name   string // ColBerth or ColUpstream
	Binary string
	// Config is KubeletConfiguration fields (YAML lines) this kubelet needs
	// beyond its configuration's: appended to what Start or StartWith
	// writes. The bench leaves it empty (KubeletConfig has each kubelet's
	// part); test/soak sets UpstreamConfig.
	Config []string
	// Args are flags of this kubelet's own, after the shared ones.
	Args []string
}

// sharedConfig is the configuration both kubelets run with: every field
// they share is set the same way, and the node guards are set explicitly
// (not left to each kubelet's defaults) so that both do the same work:
// QoS cgroups and node allocatable, the eviction manager with upstream's
// default hard thresholds, image GC (its thresholds at 100/99 % so that it
// never removes the locally built test images, which no registry can give
// back) and container GC, log rotation, volume stats.
// maxPods is the bench's --max-pods (the density scenario's count).
func sharedConfig(criEndpoint string, maxPods int) []string {
	return append([]string{
		"apiVersion: kubelet.config.k8s.io/v1beta1",
		"kind: KubeletConfiguration",
		"containerRuntimeEndpoint: " + criEndpoint,
		"cgroupDriver: cgroupfs",
		"readOnlyPort: 0",
		"maxPods: " + strconv.Itoa(maxPods),
		"syncFrequency: 1m",
		"nodeStatusUpdateFrequency: 10s",
		"nodeStatusReportFrequency: 5m",
		// cgroup v1 allowed (hosts that still run it; both refuse it by
		// default) and no iptables chains (a shared host).
		"failCgroupV1: false",
		"makeIPTablesUtilChains: false",
		// Anonymous requests allowed (the file predates the defaults
		// configuration, which authorizes the harness's client
		// certificate as a real node would).
		"authentication:",
		"  anonymous: {enabled: true}",
		"  webhook: {enabled: false}",
		"authorization: {mode: AlwaysAllow}",
	}, guardConfig()...)
}

// guardConfig is the node guards' part of sharedConfig.
func guardConfig() []string {
	return []string{
		"cgroupsPerQOS: true",
		"cgroupRoot: /",
		"enforceNodeAllocatable: [pods]",
		"evictionHard:",
		"  memory.available: 100Mi",
		"  nodefs.available: 10%",
		"  nodefs.inodesFree: 5%",
		"  imagefs.available: 15%",
		"  imagefs.inodesFree: 5%",
		"evictionPressureTransitionPeriod: 5m",
		"imageGCHighThresholdPercent: 100",
		"imageGCLowThresholdPercent: 99",
		"imageMinimumGCAge: 2m",
		"containerLogMaxSize: 10Mi",
		"containerLogMaxFiles: 5",
		"containerLogMonitorInterval: 10s",
		"containerLogMaxWorkers: 1",
		"volumeStatsAggPeriod: 1m",
	}
}

// UpstreamConfig is what the upstream kubelet needs on this kind of machine
// beyond the shared config: no swap check (berth checks /proc/swaps too, at
// its default failSwapOn: true; this machine has no swap).
func UpstreamConfig() []string {
	return []string{"failSwapOn: false"}
}

// Node is one kubelet process for one Node, started by Kubelet.Start. Its
// methods may be called from one goroutine at a time.
type Node struct {
	name    string
	dir     string // root dir, config and log
	cmd     *exec.Cmd
	exited  chan struct{}
	logFile *os.File
}

// Start runs k for nodeName with its files under dir in the shared
// configuration at upstream's maxPods (test/soak's). It returns once the
// process has started; Node Ready is the caller's business.
func (k *Kubelet) Start(nodeName, dir, kubeconfig, nodeIP, criEndpoint string) (*Node, error) {
	return k.StartWith(nodeName, dir, kubeconfig, nodeIP, sharedConfig(criEndpoint, upstreamMaxPods))
}

// StartWith is Start with the KubeletConfiguration config (YAML lines,
// e.g. KubeletConfig's), then k.Config.
func (k *Kubelet) StartWith(nodeName, dir, kubeconfig, nodeIP string, config []string) (*Node, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("make kubelet directory: %w", err)
	}
	cfgPath := filepath.Join(dir, "config.yaml")
	cfg := strings.Join(append(slices.Clone(config), k.Config...), "\n") + "\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, fmt.Errorf("write kubelet config: %w", err)
	}
	// Appended to: a Node restarted in its directory keeps one log.
	logFile, err := os.OpenFile(filepath.Join(dir, k.Name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create kubelet log: %w", err)
	}
	args := []string{"--config", cfgPath, "--kubeconfig", kubeconfig, "--root-dir", filepath.Join(dir, "root"),
		"--hostname-override", nodeName, "--node-ip", nodeIP, "--cert-dir", filepath.Join(dir, "pki"), "-v", "1"}
	args = append(args, k.Args...)
	cmd := exec.Command(k.Binary, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// The kubelet dies with the bench: an orphan would hold the runtime.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", k.Name, err)
	}
	n := &Node{name: nodeName, dir: dir, cmd: cmd, exited: make(chan struct{}), logFile: logFile}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(n.exited)
	}()
	return n, nil
}

// Pid is the kubelet's process ID.
func (n *Node) Pid() int { return n.cmd.Process.Pid }

// Name is the Node's name.
func (n *Node) Name() string { return n.name }

// Dir is the directory of the Node's files: its root dir is Dir()/root.
func (n *Node) Dir() string { return n.dir }

// Running reports an error when the process has exited.
func (n *Node) Running() error {
	select {
	case <-n.exited:
		return fmt.Errorf("kubelet for %s exited: %s (log: %s)%s", n.name, n.cmd.ProcessState, n.logFile.Name(), logTail(n.logFile.Name(), 2048))
	default:
		return nil
	}
}

// logTail is the last limit bytes of the log at path, on lines of their own
// after a newline, so that an error names why the kubelet exited even
// once the test's directory is gone; empty when it cannot be read.
func logTail(path string, limit int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return ""
	}
	off := max(info.Size()-limit, 0)
	b := make([]byte, info.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	return "; its log ends:\n" + strings.TrimRight(string(b), "\n")
}

// Kill sends SIGKILL and waits for the process to end: a crash.
func (n *Node) Kill() {
	_ = n.cmd.Process.Kill()
	<-n.exited
}

// Stop sends SIGTERM and waits up to 30 s before killing.
func (n *Node) Stop(ctx context.Context) {
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(30 * time.Second):
		_ = n.cmd.Process.Kill()
		<-n.exited
	case <-ctx.Done():
		_ = n.cmd.Process.Kill()
		<-n.exited
	}
}
