package simbench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRequestsOf(t *testing.T) {
	users := []string{berthUser, kwokUser, "system:node:sb-hollow-0", "system:node:sb-hollow-12",
		"system:node:vm", "kubernetes-admin", "system:kube-controller-manager", "system:apiserver"}
	for _, tc := range []struct {
		sim  string
		want []string
	}{
		{Berth, []string{berthUser}},
		{Kwok, []string{kwokUser}},
		{Kubemark, []string{"system:node:sb-hollow-0", "system:node:sb-hollow-12"}},
	} {
		t.Run(tc.sim, func(t *testing.T) {
			var got []string
			for _, u := range users {
				if requestsOf(tc.sim)(u, "any agent") {
					got = append(got, u)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("users counted (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeNames(t *testing.T) {
	got := []string{nodeName(Berth, 0), nodeName(Kwok, 7), nodeName(Kubemark, 999)}
	if diff := cmp.Diff([]string{"sb-berth-0", "sb-kwok-7", "sb-hollow-999"}, got); diff != "" {
		t.Errorf("node names (-want +got):\n%s", diff)
	}
}

// TestCountSpans filters an audit log, rotated once, by each simulator's
// identity and by span: the harness's and the control plane's requests,
// those outside the span and a watch's second event are not counted.
func TestCountSpans(t *testing.T) {
	from := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	line := func(id, user string, at time.Duration) string {
		return `{"kind":"Event","auditID":"` + id + `","stage":"ResponseComplete","user":{"username":"` + user +
			`"},"userAgent":"x/v0","requestReceivedTimestamp":"` + from.Add(at).Format(time.RFC3339Nano) + `"}`
	}
	log := strings.Join([]string{
		line("a", berthUser, time.Second),
		line("b", berthUser, 2*time.Second),
		line("b", berthUser, 2*time.Second), // the watch's second event
		line("c", "kubernetes-admin", 3*time.Second),
		line("d", "system:node:sb-hollow-1", 4*time.Second),
		line("e", kwokUser, 5*time.Second),
		line("f", berthUser, 61*time.Second),
		line("g", berthUser, -time.Second),
	}, "\n")
	// The API server rotated its log once, in the middle of the watch b:
	// its two events are in two files.
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	lines := strings.SplitAfterN(log, "\n", 3)
	if err := os.WriteFile(filepath.Join(dir, "audit-2026-12-03T12-00-02.500.log"), []byte(lines[0]+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(lines[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	minute := span{from, from.Add(time.Minute)}
	for _, tc := range []struct {
		sim   string
		spans []span
		want  []int
	}{
		{Berth, []span{minute, {from.Add(time.Minute), from.Add(2 * time.Minute)}, {}}, []int{2, 1, 0}},
		{Kwok, []span{minute}, []int{1}},
		{Kubemark, []span{minute, {from, from.Add(4 * time.Second)}}, []int{1, 0}},
	} {
		got, err := countSpans(path, tc.sim, tc.spans)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: counts (-want +got):\n%s", tc.sim, diff)
		}
	}
}

func TestAuditFiles(t *testing.T) {
	got := auditFiles("/d/audit.log", []string{"/d/audit-2026-12-03T13-00-19.123.log", "/d/audit-2026-12-03T12-59-01.004.log", "/d/audit.log"})
	want := []string{"/d/audit-2026-12-03T12-59-01.004.log", "/d/audit-2026-12-03T13-00-19.123.log", "/d/audit.log"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("auditFiles (-want +got):\n%s", diff)
	}
	if got := auditBackupGlob("/d/audit.log"); got != "audit-*.log" {
		t.Errorf("auditBackupGlob = %q", got)
	}
}
