package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestClusterKubectl works with pods on a berth node through the real
// kubectl: logs (follow, previous, tail, since, timestamps), exec with
// stdin and a TTY, attach, port-forward and cp. Every request goes from
// kubectl through the API server to berth's kubelet API.
func TestClusterKubectl(t *testing.T) {
	e := startClusterEnv(t)
	e.node.start()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	for _, p := range []*corev1.Pod{chattyPod(), restarterPod(), readerPod(), apiWebPod("pf-web")} {
		_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), p, metav1.CreateOptions{})
		must(t, err)
	}
	for _, name := range []string{"chatty", "reader", "pf-web"} {
		e.waitPodRunning(t, name)
	}
	t.Run("Logs", e.testLogs)
	t.Run("LogsFollow", e.testLogsFollow)
	t.Run("LogsPrevious", e.testLogsPrevious)
	t.Run("ExecStdin", e.testExecStdin)
	t.Run("ExecTTY", e.testExecTTY)
	t.Run("Attach", e.testAttach)
	t.Run("PortForward", e.testPortForward)
	t.Run("Copy", e.testCopy)
}

func busyboxPod(name, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "main", Image: busybox, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sh", "-c", script},
			}},
		},
	}
}

// chattyPod writes three lines (one to stderr) at once, then a tick a second.
func chattyPod() *corev1.Pod {
	return busyboxPod("chatty", "echo alpha; echo beta >&2; echo gamma; i=0; while true; do echo tick $i; i=$((i+1)); sleep 1; done")
}

// restarterPod fails its first run and keeps running the second.
func restarterPod() *corev1.Pod {
	p := busyboxPod("restarter", "if [ ! -f /data/ran ]; then touch /data/ran; echo first instance; exit 1; fi; echo second instance; exec sleep 3600")
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return p
}

// readerPod echoes what it reads on its stdin.
func readerPod() *corev1.Pod {
	p := busyboxPod("reader", "while read line; do echo got $line; done; sleep 3600")
	p.Spec.Containers[0].Stdin = true
	return p
}

// kubectl runs kubectl as the admin and returns its standard output.
func (e *clusterEnv) kubectl(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.cl.Kubectl(ctx, args...)
	if err != nil {
		t.Fatalf("%v (stdout %q)", err, out)
	}
	return out
}

// syncBuffer collects a background process's output.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// background starts name with args, its output (stdout and stderr) in the
// returned buffer; the process is killed when the test ends.
func background(t *testing.T, stdin io.Reader, name string, args ...string) (*exec.Cmd, *syncBuffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	out := &syncBuffer{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, out, out
	must(t, cmd.Start())
	done, exited := make(chan error, 1), make(chan struct{})
	go func() {
		done <- cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	return cmd, out, done
}

func (e *clusterEnv) kubectlArgs(args ...string) []string {
	return append([]string{"--kubeconfig", e.cl.AdminKubeconfig()}, args...)
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func (e *clusterEnv) testLogs(t *testing.T) {
	// Wait for some ticks, so that --since can leave the first lines out.
	e.node.waitFor("chatty ticks", func() bool {
		out, err := e.cl.Kubectl(context.Background(), "logs", "chatty")
		return err == nil && strings.Contains(out, "tick 5")
	})
	all := e.kubectl(t, "logs", "chatty")
	// stdout keeps its order; stderr's line may land anywhere among them.
	a, g, t0 := strings.Index(all, "alpha\n"), strings.Index(all, "gamma\n"), strings.Index(all, "tick 0\n")
	if a < 0 || g < a || t0 < g || !strings.Contains(all, "beta\n") {
		t.Errorf("logs = %q, want alpha, beta, gamma then ticks", all)
	}
	tail := nonEmptyLines(e.kubectl(t, "logs", "chatty", "--tail=2"))
	if len(tail) != 2 || !strings.HasPrefix(tail[0], "tick ") || !strings.HasPrefix(tail[1], "tick ") {
		t.Errorf("--tail=2 = %q, want two tick lines", tail)
	}
	stamped := nonEmptyLines(e.kubectl(t, "logs", "chatty", "--timestamps", "--tail=3"))
	if len(stamped) != 3 {
		t.Fatalf("--timestamps --tail=3 = %q, want 3 lines", stamped)
	}
	for _, l := range stamped {
		ts, rest, _ := strings.Cut(l, " ")
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasPrefix(rest, "tick ") {
			t.Errorf("timestamped line %q: %v", l, err)
		}
	}
	since := e.kubectl(t, "logs", "chatty", "--since=3s")
	if strings.Contains(since, "alpha") || !strings.Contains(since, "tick ") {
		t.Errorf("--since=3s = %q, want recent ticks only", since)
	}
	_, err := e.cl.Kubectl(context.Background(), "logs", "chatty", "-c", "nope")
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("logs of an unknown container: err = %v", err)
	}
}

func (e *clusterEnv) testLogsFollow(t *testing.T) {
	_, out, done := background(t, nil, e.cl.KubectlPath(), e.kubectlArgs("logs", "-f", "--tail=1", "chatty")...)
	var first string
	e.node.waitFor("a followed tick", func() bool {
		lines := nonEmptyLines(out.String())
		if len(lines) > 0 {
			first = lines[0]
		}
		return len(lines) >= 3
	})
	lines := nonEmptyLines(out.String())
	if lines[0] != first || lines[1] == lines[0] || !strings.HasPrefix(lines[2], "tick ") {
		t.Errorf("followed output %q, want new ticks as they are written", lines)
	}
	select {
	case err := <-done:
		t.Fatalf("kubectl logs -f ended while the container runs: %v: %s", err, out.String())
	default:
	}

	// Following a container that exits ends when its log is drained.
	short := busyboxPod("short", "echo one; sleep 4; echo two")
	short.Spec.RestartPolicy = corev1.RestartPolicyNever
	_, err := e.admin.CoreV1().Pods("default").Create(context.Background(), short, metav1.CreateOptions{})
	must(t, err)
	e.waitAPI(t, "pod short started", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "short", metav1.GetOptions{})
		return err == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].ContainerID != "", err
	})
	_, out, done = background(t, nil, e.cl.KubectlPath(), e.kubectlArgs("logs", "-f", "short")...)
	select {
	case err := <-done:
		if err != nil || out.String() != "one\ntwo\n" {
			t.Errorf("logs -f short: %v, output %q, want one and two", err, out.String())
		}
	case <-time.After(waitTimeout):
		t.Errorf("kubectl logs -f did not end after the container exited; output %q", out.String())
	}
}

func (e *clusterEnv) testLogsPrevious(t *testing.T) {
	e.waitAPI(t, "restarter restarted and running", func(ctx context.Context) (bool, error) {
		p, err := e.admin.CoreV1().Pods("default").Get(ctx, "restarter", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) != 1 {
			return false, err
		}
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount == 1 && cs.State.Running != nil, nil
	})
	if got := e.kubectl(t, "logs", "restarter"); got != "second instance\n" {
		t.Errorf("logs = %q, want the current instance", got)
	}
	if got := e.kubectl(t, "logs", "restarter", "--previous"); got != "first instance\n" {
		t.Errorf("logs --previous = %q, want the first instance", got)
	}
	_, err := e.cl.Kubectl(context.Background(), "logs", "chatty", "--previous")
	if err == nil || !strings.Contains(err.Error(), `previous terminated container "main" in pod "chatty" not found`) {
		t.Errorf("logs --previous without one: err = %v", err)
	}
}

func (e *clusterEnv) testExecStdin(t *testing.T) {
	if got := e.kubectl(t, "exec", "chatty", "--", "echo", "hello", "exec"); got != "hello exec\n" {
		t.Errorf("exec echo = %q", got)
	}
	cmd := exec.Command(e.cl.KubectlPath(), e.kubectlArgs("exec", "-i", "chatty", "--", "sh", "-c", "tr a-z A-Z; test -t 0 || echo no-tty")...)
	cmd.Stdin = strings.NewReader("from stdin\n")
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "FROM STDIN\nno-tty\n" {
		t.Errorf("exec -i: %v, output %q", err, out)
	}
	_, err = e.cl.Kubectl(context.Background(), "exec", "chatty", "--", "sh", "-c", "exit 3")
	if err == nil || !strings.Contains(err.Error(), "exit code 3") {
		t.Errorf("exec exit 3: err = %v", err)
	}
}

func (e *clusterEnv) testExecTTY(t *testing.T) {
	// script gives kubectl a terminal, so that -t takes effect.
	// script runs the line through a shell: the inner command is quoted.
	line := strings.Join(append([]string{e.cl.KubectlPath()}, e.kubectlArgs("exec", "-it", "chatty", "--", "sh", "-c", "'test -t 0 && tty'")...), " ")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "script", "-qec", line, "/dev/null").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "/dev/pts/") {
		t.Errorf("exec -it: %v, output %q, want a tty", err, out)
	}
}

func (e *clusterEnv) testAttach(t *testing.T) {
	// A kernel pipe buffers the writes, so a write never waits on kubectl.
	stdinR, stdinW, err := os.Pipe()
	must(t, err)
	defer stdinR.Close()
	defer stdinW.Close()
	_, out, done := background(t, stdinR, e.cl.KubectlPath(), e.kubectlArgs("attach", "-i", "reader")...)
	// Attach takes a moment; write until the answer shows.
	e.node.waitFor("attached reader to answer", func() bool {
		select {
		case err := <-done:
			t.Fatalf("kubectl attach ended: %v: %s", err, out.String())
		default:
		}
		_, _ = io.WriteString(stdinW, "ping\n")
		return strings.Contains(out.String(), "got ping")
	})
}

func (e *clusterEnv) testPortForward(t *testing.T) {
	port := freePort(t)
	_, out, done := background(t, nil, e.cl.KubectlPath(), e.kubectlArgs("port-forward", "pod/pf-web", fmt.Sprintf("%d:8080", port))...)
	e.node.waitFor("port-forward listening", func() bool {
		select {
		case err := <-done:
			t.Fatalf("kubectl port-forward ended: %v: %s", err, out.String())
		default:
		}
		return strings.Contains(out.String(), "Forwarding from")
	})
	for i := range 2 {
		body, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil || body != "pf-web\n" {
			t.Errorf("request %d through port-forward: %v, body %q", i, err, body)
		}
	}
}

func (e *clusterEnv) testCopy(t *testing.T) {
	dir := t.TempDir()
	local := filepath.Join(dir, "up.txt")
	must(t, os.WriteFile(local, []byte("copied up\n"), 0o644))
	e.kubectl(t, "cp", local, "default/chatty:/tmp/up.txt")
	if got := e.kubectl(t, "exec", "chatty", "--", "cat", "/tmp/up.txt"); got != "copied up\n" {
		t.Errorf("file copied into the pod = %q", got)
	}
	e.kubectl(t, "exec", "chatty", "--", "sh", "-c", "echo copied down > /tmp/down.txt")
	down := filepath.Join(dir, "down.txt")
	e.kubectl(t, "cp", "default/chatty:/tmp/down.txt", down)
	if got, err := readFile(down); err != nil || got != "copied down\n" {
		t.Errorf("file copied from the pod: %q, %v", got, err)
	}
}
