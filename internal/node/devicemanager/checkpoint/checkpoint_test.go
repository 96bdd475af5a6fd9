package checkpoint

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUpstreamSample: testdata/upstream.json was written by upstream's
// checkpoint package (tools/deviceplugin/cmd/checkpoint-sample); berth
// reads it and writes the same bytes back, checksum included.
func TestUpstreamSample(t *testing.T) {
	b, err := os.ReadFile("testdata/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatalf("Decode(upstream sample): %v", err)
	}
	want := Checkpoint{
		Entries: []PodDevicesEntry{{
			PodUID: "7f9c5a1e-0000-4000-8000-000000000001", ContainerName: "app", ResourceName: "example.com/resource",
			DeviceIDs: DevicesPerNUMA{-1: {"dev-1"}, 0: {"dev-2"}}, AllocResp: c.Entries[0].AllocResp,
		}},
		Registered: map[string][]string{"example.com/resource": {"dev-1", "dev-2", "dev-3"}, "example.com/other": {}},
	}
	if d := cmp.Diff(want, c); d != "" {
		t.Errorf("decoded (-want +got):\n%s", d)
	}
	if len(c.Entries[0].AllocResp) == 0 {
		t.Error("the allocate response is empty")
	}
	out, err := Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, bytes.TrimSpace(b)) {
		t.Errorf("Encode(Decode(sample)) =\n%s\nwant upstream's\n%s", out, b)
	}
}

func TestRoundTrip(t *testing.T) {
	for name, c := range map[string]Checkpoint{
		"no pods":   {Registered: map[string][]string{"example.com/a": {"x"}}},
		"nothing":   {Registered: map[string][]string{}},
		"one entry": {Entries: []PodDevicesEntry{{PodUID: "u", ContainerName: "c", ResourceName: "example.com/a", DeviceIDs: DevicesPerNUMA{-1: {"x"}}, AllocResp: []byte{1, 2}}}, Registered: map[string][]string{}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, c); err != nil {
				t.Fatal(err)
			}
			got, found, err := Read(dir)
			if err != nil || !found {
				t.Fatalf("Read = found %v, %v", found, err)
			}
			if d := cmp.Diff(c, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
}

// TestCorrupt: a file whose content does not match its checksum is
// refused, as upstream's VerifyChecksum.
func TestCorrupt(t *testing.T) {
	b, err := os.ReadFile("testdata/upstream.json")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(b), `"dev-3"`, `"dev-4"`, 1)
	if _, err := Decode([]byte(bad)); err == nil || !strings.Contains(err.Error(), "checkpoint is corrupted") {
		t.Errorf("Decode(edited sample) = %v, want a corrupted checkpoint", err)
	}
	if _, err := Decode([]byte("{")); err == nil {
		t.Error("Decode of broken JSON succeeded")
	}
}
