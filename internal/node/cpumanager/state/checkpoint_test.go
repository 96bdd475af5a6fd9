package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// Samples from upstream's TestCheckpointStateRestore
// (pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go): a file
// without data whose checksum is a v3 one (upstream restores it, "Restore
// checkpoint from v2 (migration)"), and a data string with its
// dataChecksum, as upstream computed them.
const (
	upstreamV2 = `{
				"policyName": "static",
				"defaultCPUSet": "7-9",
				"entries": {
					"pod": {
						"container1": "4-6",
						"container2": "1-3"
					}
				},
				"checksum": 1942532442
			}`
	upstreamData         = `{\"policyName\":\"other\",\"defaultCPUSet\":\"7-9\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"1-3\"}}}`
	upstreamDataChecksum = `"dataChecksum": 1432271708`
)

// TestSamplesAreUpstreams pins the samples to upstream's test file.
func TestSamplesAreUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	path := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read upstream test: %v", err)
	}
	for _, s := range []string{strings.TrimSuffix(upstreamV2, "\n\t\t\t}`"), upstreamData, upstreamDataChecksum} {
		if !strings.Contains(string(b), s) {
			t.Errorf("upstream's %s no longer holds %s", path, s)
		}
	}
}

func TestLegacyChecksumMatchesUpstream(t *testing.T) {
	c, err := Decode([]byte(upstreamV2))
	if err != nil {
		t.Fatalf("Decode of upstream's v2 sample: %v", err)
	}
	want := Checkpoint{PolicyName: "static", DefaultCPUSet: "7-9", Entries: map[string]map[string]string{"pod": {"container1": "4-6", "container2": "1-3"}}}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("Decode (-want +got):\n%s", d)
	}
	corrupt := strings.Replace(upstreamV2, "7-9", "7-8", 1)
	if _, err := Decode([]byte(corrupt)); err == nil {
		t.Errorf("Decode of a v2 file with a wrong checksum succeeded")
	}
}

func TestDataChecksumMatchesUpstream(t *testing.T) {
	// The v2 part of this sample is deliberately not the data's (upstream's
	// test says so); v1.37 reads the data.
	in := `{"policyName":"static","defaultCPUSet":"7-9","checksum":1942532442,"data":"` + upstreamData + `",` + upstreamDataChecksum + `}`
	c, err := Decode([]byte(in))
	if err != nil {
		t.Fatalf("Decode of upstream's v4 sample: %v", err)
	}
	if c.PolicyName != "other" || c.DefaultCPUSet != "7-9" {
		t.Errorf("Decode = %+v, want the data's policy other and 7-9", c)
	}
	if _, err := Decode([]byte(strings.Replace(in, "1432271708", "1432271709", 1))); err == nil {
		t.Errorf("Decode with a wrong dataChecksum succeeded")
	}
}

func TestEncodeRoundTripsWithUpstreamChecksums(t *testing.T) {
	c := Checkpoint{PolicyName: "static", DefaultCPUSet: "7-9", Entries: map[string]map[string]string{"pod": {"container1": "4-6", "container2": "1-3"}}}
	b, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	// The v2 checksum upstream writes: the v2 struct hashed as
	// CPUManagerCheckpoint (TestCPUManagerCheckpointV2_MarshalCheckpoint's
	// legacy calculation), which is not the v3 checksum of the sample.
	if !strings.Contains(string(b), `"checksum":964019483`) {
		t.Errorf("Encode = %s, want the v2 checksum 964019483", b)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode(Encode): %v", err)
	}
	if d := cmp.Diff(c, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	if _, found, err := Read(dir); err != nil || found {
		t.Fatalf("Read of an empty dir = found %v, %v", found, err)
	}
	c := Checkpoint{PolicyName: "none", DefaultCPUSet: ""}
	if err := Write(dir, c); err != nil {
		t.Fatal(err)
	}
	got, found, err := Read(dir)
	if err != nil || !found {
		t.Fatalf("Read = found %v, %v", found, err)
	}
	if d := cmp.Diff(c, got); d != "" {
		t.Errorf("Read (-want +got):\n%s", d)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d files, want only %s", len(entries), FileName)
	}
}
