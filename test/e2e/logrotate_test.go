package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestClusterLogRotation runs a container that logs about 2 KiB a second
// on a node with a 4 KiB containerLogMaxSize: berth rotates its log through
// containerd, gzips the older rotated files and keeps at most
// containerLogMaxFiles, and kubectl logs (plain and -f) still returns the
// latest lines, in order.
func TestClusterLogRotation(t *testing.T) {
	e := startClusterEnv(t)
	f, err := os.OpenFile(e.node.config, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("\ncontainerLogMaxSize: 4Ki\ncontainerLogMaxFiles: 3\ncontainerLogMonitorInterval: 3s\n")
	must(t, err)
	must(t, f.Close())
	e.node.start()
	e.waitAPI(t, "default service account", func(ctx context.Context) (bool, error) {
		_, err := e.admin.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	// Each line is "line <n> " and 90 x's: about 100 bytes, 20 a second.
	pod := busyboxPod("rotating", `pad=$(printf '%090d' 0 | tr 0 x); i=0; while true; do echo "line $i $pad"; i=$((i+1)); sleep 0.05; done`)
	_, err = e.admin.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{})
	must(t, err)
	p := e.waitPodRunning(t, "rotating")
	logDir := filepath.Join("/var/log/pods", "default_rotating_"+string(p.UID), "main")

	// Follow from the start, through the rotations to come.
	_, followed, _ := background(t, nil, e.cl.KubectlPath(), e.kubectlArgs("logs", "-f", "rotating")...)

	var files []string
	e.node.waitFor("a compressed rotated log", func() bool {
		files = logFiles(t, logDir)
		for _, f := range files {
			if strings.HasSuffix(f, ".gz") {
				return true
			}
		}
		return false
	})
	// Wait for one more rotation, so that at least three have happened and
	// the oldest files were removed: never more than containerLogMaxFiles.
	first := files
	e.node.waitFor("another rotation", func() bool {
		files = logFiles(t, logDir)
		return strings.Join(files, ",") != strings.Join(first, ",")
	})
	if len(files) > 3 {
		t.Errorf("log files %v, want at most containerLogMaxFiles (3)", files)
	}
	var gz, plain int
	for _, f := range files {
		switch {
		case f == "0.log":
		case strings.HasSuffix(f, ".gz"):
			gz++
		default:
			plain++
		}
	}
	if plain > 1 {
		t.Errorf("log files %v: only the newest rotated file stays uncompressed", files)
	}

	// kubectl logs --tail returns the latest lines: they keep coming.
	last := func() int {
		lines := nonEmptyLines(e.kubectl(t, "logs", "rotating", "--tail=1"))
		if len(lines) != 1 {
			t.Fatalf("logs --tail=1 = %q", lines)
		}
		return lineNumber(t, lines[0])
	}
	before := last()
	time.Sleep(4 * time.Second) // past another rotation
	after := last()
	if after <= before {
		t.Errorf("latest line %d, then %d: kubectl logs does not return the latest lines across rotation", before, after)
	}
	// kubectl logs reads the rotated files, then the current one, in order.
	all := nonEmptyLines(e.kubectl(t, "logs", "rotating"))
	checkIncreasing(t, "logs", all)
	if len(all) < 60 {
		t.Errorf("logs returned %d lines, want those of the rotated files too", len(all))
	}
	// -f went on through every rotation without losing or repeating a line.
	lines := nonEmptyLines(followed.String())
	if len(lines) < 100 {
		t.Fatalf("logs -f returned %d lines across the rotations, want more", len(lines))
	}
	for i, l := range lines {
		if n := lineNumber(t, l); n != i {
			t.Fatalf("logs -f line %d is %q: a line was lost or repeated across a rotation", i, l)
		}
	}
}

func logFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read log directory: %v", err)
	}
	var out []string
	for _, e := range entries {
		// A compression in progress (<log>.<timestamp>.tmp, upstream's
		// name too) becomes the .gz; it is neither a file kept nor an
		// uncompressed one.
		if !strings.HasSuffix(e.Name(), ".tmp") {
			out = append(out, e.Name())
		}
	}
	return out
}

func lineNumber(t *testing.T, line string) int {
	t.Helper()
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "line" {
		t.Fatalf("unexpected log line %q", line)
	}
	n, err := strconv.Atoi(f[1])
	if err != nil {
		t.Fatalf("unexpected log line %q: %v", line, err)
	}
	return n
}

func checkIncreasing(t *testing.T, what string, lines []string) {
	t.Helper()
	prev := -1
	for _, l := range lines {
		n := lineNumber(t, l)
		if n <= prev {
			t.Fatalf("%s: line %d after line %d", what, n, prev)
		}
		prev = n
	}
}
