package dra

import (
	"context"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// TestCheckpointIsUpstreams reads the checkpoints upstream's own
// checkpointer test expects its kubelet to write, decodes each and
// encodes it again: berth must write the same bytes (field names, order,
// checksum), so either kubelet reads the other's file.
func TestCheckpointIsUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	b, err := os.ReadFile(filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg/kubelet/cm/dra/state/checkpointer_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	found := regexp.MustCompile("expectedCheckpointContent: `([^`]*)`").FindAllSubmatch(b, -1)
	if len(found) < 3 {
		t.Fatalf("found %d expected checkpoints in upstream's test, want at least 3", len(found))
	}
	for i, f := range found {
		want := string(f[1])
		claims, err := decodeState(f[1])
		if err != nil {
			t.Errorf("upstream checkpoint %d: %v", i, err)
			continue
		}
		got, err := encodeState(claims)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("upstream checkpoint %d encoded again differs:\n got %s\nwant %s", i, got, want)
		}
	}
}

func TestCheckpointRefusals(t *testing.T) {
	good, err := encodeState([]ClaimState{{ClaimUID: "u", ClaimName: "c", Namespace: "ns", PodUIDs: map[string]struct{}{"p": {}}}})
	if err != nil {
		t.Fatal(err)
	}
	sum := regexp.MustCompile(`"Checksum":(\d+)`).FindSubmatch(good)[1]
	n, _ := strconv.Atoi(string(sum))
	for name, tc := range map[string]struct {
		b    string
		want string
	}{
		"bad checksum": {strings.Replace(string(good), string(sum), strconv.Itoa(n+1), 1), "checksum"},
		"not JSON":     {"{", "decode DRA checkpoint"},
		"no claim":     {string(mustEncode(t, []ClaimState{{ClaimUID: "u"}})), "names no claim"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeState([]byte(tc.b)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("decodeState = %v, want %q", err, tc.want)
			}
		})
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, StateFileName), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{StateDir: dir, Clock: fakeClock()}); err == nil || !strings.Contains(err.Error(), "remove "+StateFileName) {
		t.Errorf("New over a corrupt checkpoint = %v, want the advice", err)
	}
}

func mustEncode(t *testing.T, c []ClaimState) []byte {
	b, err := encodeState(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRestartRestoresTheClaims: a manager started over another's
// checkpoint knows the claims, their pods and CDI devices (a container
// restarted after berth's restart gets them), prepares a claim again once
// when a sandbox is next created (upstream: drivers are idempotent) with
// its devices replaced, not doubled, and unprepares it when the pod goes.
func TestRestartRestoresTheClaims(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pod := claimPod("pod-a", "pod-a-gpu")
	claim := allocatedClaim("pod-a-gpu", pod, pod)
	before, _, _ := testManager(t, dir, claim)
	d := startDriver(t, drapb.DRAPluginService)
	register(t, before, d, drapb.DRAPluginService)
	if err := before.Prepare(ctx, pod); err != nil {
		t.Fatal(err)
	}

	after, _, _ := testManager(t, dir, claim)
	if diff := cmp.Diff([]string{string(pod.UID)}, uidStrings(after.HeldPods())); diff != "" {
		t.Errorf("HeldPods after the restart (-want +got):\n%s", diff)
	}
	wantIDs := []string{"example.com/test=pod-a-gpu"}
	if ids, err := after.CDIDevices(pod, &pod.Spec.Containers[0]); err != nil || !cmp.Equal(ids, wantIDs) {
		t.Errorf("CDIDevices after the restart = %q, %v", ids, err)
	}
	register(t, after, d, drapb.DRAPluginService)
	if err := after.Prepare(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := after.Prepare(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if got := len(d.Calls()); got != 2 {
		t.Errorf("NodePrepareResources calls over both runs = %d, want 2 (once per run)", got)
	}
	if ids, _ := after.CDIDevices(pod, &pod.Spec.Containers[0]); !cmp.Equal(ids, wantIDs) {
		t.Errorf("CDIDevices after preparing again = %q, want %q (not doubled)", ids, wantIDs)
	}
	after.Forget(ctx, pod.UID)
	if calls := d.Calls(); len(calls) != 3 || calls[2].RPC != "NodeUnprepareResources" {
		t.Errorf("calls %+v, want the claim unprepared by the pod gone", calls)
	}
	again, _, _ := testManager(t, dir)
	if held := again.HeldPods(); len(held) != 0 {
		t.Errorf("a third run holds %v, want nothing", held)
	}
}

// TestNewWritesAnEmptyCheckpoint: with no checkpoint, New writes an empty
// one at once, byte for byte what upstream's GetOrCreate writes (its
// NewCheckpoint(nil)), so the file is there before any claim is prepared.
func TestNewWritesAnEmptyCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(Config{StateDir: dir, Clock: fakeClock()}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, StateFileName))
	if err != nil {
		t.Fatalf("no checkpoint after New: %v", err)
	}
	data := `{"kind":"DRACheckpoint","apiVersion":"checkpoint.dra.kubelet.k8s.io/v1","ClaimInfoStateList":null}`
	want := `{"Data":` + strconv.Quote(data) + `,"Checksum":` + strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(data))), 10) + `}`
	if string(got) != want {
		t.Errorf("empty checkpoint:\n got %s\nwant %s", got, want)
	}
	m, err := New(Config{StateDir: dir, Clock: fakeClock()})
	if err != nil || len(m.claims) != 0 {
		t.Errorf("New over the empty checkpoint = %d claims, %v; want none, nil", len(m.claims), err)
	}
}
