package state

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/testkit/upstreamsrc"
)

// Samples from upstream's TestCheckpointStateRestore
// (pkg/kubelet/cm/memorymanager/state/state_checkpoint_test.go): the v1
// fields with their checksum ("Restore checkpoint from v1 (migration)"),
// the same with podEntries and a v2 checksum ("Restore checkpoint from v2
// with PodLevelResourceManagers disabled"), and a v3 data string with its
// dataChecksum ("Restore valid checkpoint"), as upstream computed them.
const (
	upstreamMachine = `"machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},`
	upstreamEntries = `"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}},`
	upstreamPodEnts = `"podEntries":{"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}},`
	upstreamV1Sum   = `"checksum": 4215593881`
	upstreamV2Sum   = `"checksum": 1278640530`
	upstreamData    = `"data": "{\"policyName\":\"static\",\"machineState\":{\"0\":{\"numberOfAssignments\":0,\"memoryMap\":{\"memory\":{\"total\":2048,\"systemReserved\":512,\"allocatable\":1536,\"reserved\":512,\"free\":1024}},\"cells\":[]}},\"entries\":{\"pod\":{\"container1\":[{\"numaAffinity\":[0],\"type\":\"memory\",\"size\":512}]}}}",`
	upstreamDataSum = `"dataChecksum": 1849615440`
)

func sampleV1() string {
	return `{"policyName":"static",` + upstreamMachine + upstreamEntries + upstreamV1Sum + `}`
}

func sampleV2() string {
	return `{"policyName":"static",` + upstreamMachine + upstreamEntries + upstreamPodEnts + upstreamV2Sum + `}`
}

// sampleV3 has v1 fields that do not match data, as upstream's sample:
// only data is read.
func sampleV3() string {
	return `{"policyName":"other","machineState":{},"checksum": 1234,` + upstreamData + upstreamDataSum + `}`
}

func wantSample() Checkpoint {
	return Checkpoint{
		PolicyName: "static",
		MachineState: NUMANodeMap{0: {
			MemoryMap: map[v1.ResourceName]*MemoryTable{v1.ResourceMemory: {TotalMemSize: 2048, SystemReserved: 512, Allocatable: 1536, Reserved: 512, Free: 1024}},
			Cells:     []int{},
		}},
		Entries: ContainerMemoryAssignments{"pod": {"container1": {{NUMAAffinity: []int{0}, Type: v1.ResourceMemory, Size: 512}}}},
	}
}

// TestSamplesAreUpstreams pins the samples to upstream's test file.
func TestSamplesAreUpstreams(t *testing.T) {
	src := upstreamsrc.New(t)
	path := filepath.Join(src.ModuleDir("k8s.io/kubernetes"), "pkg/kubelet/cm/memorymanager/state/state_checkpoint_test.go")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read upstream test: %v", err)
	}
	for _, s := range []string{
		upstreamMachine + "\n\t\t\t\t" + upstreamEntries + "\n\t\t\t\t" + upstreamV1Sum + "\n",
		upstreamEntries + "\n\t\t\t\t" + upstreamPodEnts + "\n\t\t\t\t" + upstreamV2Sum + "\n",
		upstreamData + "\n\t\t\t\t" + upstreamDataSum + "\n",
	} {
		if !strings.Contains(string(b), s) {
			t.Errorf("upstream's %s no longer holds %s", path, s)
		}
	}
}

func TestDecodeUpstreamSamples(t *testing.T) {
	for name, s := range map[string]string{"v1": sampleV1(), "v2": sampleV2(), "v3": sampleV3()} {
		t.Run(name, func(t *testing.T) {
			c, err := Decode([]byte(s))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if d := cmp.Diff(wantSample(), c); d != "" {
				t.Errorf("Decode (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		name, content, wantErr string
	}{
		{"v1 corrupt", strings.Replace(sampleV1(), `"size":512`, `"size":511`, 1), "checkpoint is corrupted"},
		{"v2 corrupt", strings.Replace(sampleV2(), `"total":2048`, `"total":2047`, 1), "checkpoint is corrupted"},
		{"v3 corrupt data", strings.Replace(sampleV3(), `1849615440`, `1234`, 1), "data checksum"},
		{"v3 checksum without data", `{"policyName":"static","checksum":4215593881,"dataChecksum":1234}`, "deserialize memory manager checkpoint data"},
		{"not json", `{`, "deserialize memory manager checkpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.content))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Decode error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

// TestV1ChecksumZeroAccepted: upstream accepts a v1 file whose checksum is 0.
func TestV1ChecksumZeroAccepted(t *testing.T) {
	s := strings.Replace(sampleV1(), upstreamV1Sum, `"checksum": 0`, 1)
	if _, err := Decode([]byte(s)); err != nil {
		t.Errorf("Decode: %v", err)
	}
}

// TestEncodeIsReadableByEveryVersion: what berth writes carries the v1
// checksum older kubelets verify (the upstream sample's, for the sample's
// content) and the data v1.37 reads.
func TestEncodeIsReadableByEveryVersion(t *testing.T) {
	b, err := Encode(wantSample())
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if !strings.Contains(string(b), `"checksum":4215593881`) {
		t.Errorf("Encode wrote %s, want upstream's v1 checksum 4215593881", b)
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if d := cmp.Diff(wantSample(), c); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	// Without data, the same bytes are a valid v1 file.
	s := strings.Replace(string(b), `"data":`, `"ignored":`, 1)
	s = strings.Replace(s, `"dataChecksum":`, `"ignoredToo":`, 1)
	if _, err := Decode([]byte(s)); err != nil {
		t.Errorf("Decode of the v1 part: %v", err)
	}
}

func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	if _, found, err := Read(dir); found || err != nil {
		t.Fatalf("Read of an empty dir = found %v, %v", found, err)
	}
	want := Checkpoint{PolicyName: "None", MachineState: NUMANodeMap{}, Entries: ContainerMemoryAssignments{}}
	if err := Write(dir, Checkpoint{PolicyName: "None"}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	got, found, err := Read(dir)
	if err != nil || !found {
		t.Fatalf("Read = found %v, %v", found, err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Read (-want +got):\n%s", d)
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(dir); err == nil {
		t.Error("Read of a broken file: no error")
	}
}
