package state

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/utils/dump"

	"github.com/berthk8s/berth/internal/platform/checkpoint"
)

// Checkpoint is the checkpoint's content: the policy that wrote it, the
// machine state and each container's blocks.
type Checkpoint struct {
	PolicyName   string
	MachineState NUMANodeMap
	Entries      ContainerMemoryAssignments
}

// checksum is upstream's checkpointmanager/checksum.Checksum.
type checksum uint64

// MemoryManagerCheckpointV1 is upstream's v1 struct, the part of the file
// older kubelets read. Its name, field names and field types are part of
// the checksum.
type MemoryManagerCheckpointV1 struct {
	PolicyName   string                     `json:"policyName"`
	MachineState NUMANodeMap                `json:"machineState"`
	Entries      ContainerMemoryAssignments `json:"entries,omitempty"`
	Checksum     checksum                   `json:"checksum"`
}

// MemoryManagerCheckpointV2 is upstream's v2 struct (v1 plus podEntries),
// only ever read.
type MemoryManagerCheckpointV2 struct {
	PolicyName   string                     `json:"policyName"`
	MachineState NUMANodeMap                `json:"machineState"`
	Entries      ContainerMemoryAssignments `json:"entries,omitempty"`
	PodEntries   PodMemoryAssignments       `json:"podEntries,omitempty"`
	Checksum     checksum                   `json:"checksum"`
}

// data is upstream's MemoryManagerCheckpointData; berth writes no
// podEntries (PodLevelResourceManagers is off) and ignores them on read,
// as upstream does with the gate off.
type data struct {
	PolicyName   string                     `json:"policyName"`
	MachineState NUMANodeMap                `json:"machineState"`
	Entries      ContainerMemoryAssignments `json:"entries,omitempty"`
	PodEntries   PodMemoryAssignments       `json:"podEntries,omitempty"`
}

// file is the v3 file: the v1 fields inline, podEntries of v2 files, then
// data and its checksum.
type file struct {
	MemoryManagerCheckpointV1 `json:",inline"`
	PodEntries                PodMemoryAssignments `json:"podEntries,omitempty"`
	Data                      string               `json:"data"`
	DataChecksum              checksum             `json:"dataChecksum"`
}

// hash is upstream's FNV-32a over a dump.ForHash rendering
// (hashutil.DeepHashObject).
func hash(rendered string) checksum { return checksum(checkpoint.Hash(rendered)) }

// render is v's dump.ForHash rendering under upstream's type names: the
// struct named MemoryManagerCheckpoint (as upstream renames it) and the
// checksum type checksum.Checksum.
func render(v any, typeName string) string {
	s := dump.ForHash(v)
	s = strings.Replace(s, typeName, "MemoryManagerCheckpoint", 1)
	return strings.Replace(s, "(state.checksum)", "(checksum.Checksum)", 1)
}

func v1Checksum(v MemoryManagerCheckpointV1) checksum {
	v.Checksum = 0
	return hash(render(&v, "MemoryManagerCheckpointV1"))
}

func v2Checksum(v MemoryManagerCheckpointV2) checksum {
	v.Checksum = 0
	return hash(render(&v, "MemoryManagerCheckpointV2"))
}

// normalized has empty maps where c has nil ones, as upstream's
// constructors make them, so both checksums render the same value.
func normalized(c Checkpoint) Checkpoint {
	if c.MachineState == nil {
		c.MachineState = NUMANodeMap{}
	}
	if c.Entries == nil {
		c.Entries = ContainerMemoryAssignments{}
	}
	return c
}

// Encode returns the file's bytes for c.
func Encode(c Checkpoint) ([]byte, error) {
	c = normalized(c)
	d, err := json.Marshal(data{PolicyName: c.PolicyName, MachineState: c.MachineState, Entries: c.Entries})
	if err != nil {
		return nil, fmt.Errorf("serialize memory manager checkpoint data: %w", err)
	}
	f := file{Data: string(d), DataChecksum: hash(dump.ForHash(string(d)))}
	f.MemoryManagerCheckpointV1 = MemoryManagerCheckpointV1{PolicyName: c.PolicyName, MachineState: c.MachineState, Entries: c.Entries}
	f.Checksum = v1Checksum(f.MemoryManagerCheckpointV1)
	return json.Marshal(f)
}

// Decode reads a file's bytes as upstream v1.37 does: the v3 data when it
// is there (its checksum must match; a corrupt v3 file is never read as
// an older one), else the v2 fields (their checksum must match), else the
// v1 fields (their checksum must match, or be 0).
func Decode(b []byte) (Checkpoint, error) {
	f := file{MemoryManagerCheckpointV1: MemoryManagerCheckpointV1{MachineState: NUMANodeMap{}, Entries: ContainerMemoryAssignments{}}, PodEntries: PodMemoryAssignments{}}
	if err := json.Unmarshal(b, &f); err != nil {
		return Checkpoint{}, fmt.Errorf("deserialize memory manager checkpoint: %w", err)
	}
	if f.Data != "" || f.DataChecksum != 0 {
		return decodeData(f)
	}
	v1 := f.MemoryManagerCheckpointV1
	v2 := MemoryManagerCheckpointV2{PolicyName: v1.PolicyName, MachineState: v1.MachineState, Entries: v1.Entries, PodEntries: f.PodEntries, Checksum: v1.Checksum}
	if v2Checksum(v2) != f.Checksum && f.Checksum != 0 && v1Checksum(v1) != f.Checksum {
		return Checkpoint{}, fmt.Errorf("checkpoint is corrupted: checksum %d matches neither its v2 nor its v1 content", f.Checksum)
	}
	return Checkpoint{PolicyName: v1.PolicyName, MachineState: v1.MachineState, Entries: v1.Entries}, nil
}

func decodeData(f file) (Checkpoint, error) {
	d := data{MachineState: NUMANodeMap{}, Entries: ContainerMemoryAssignments{}}
	if err := json.Unmarshal([]byte(f.Data), &d); err != nil {
		return Checkpoint{}, fmt.Errorf("deserialize memory manager checkpoint data: %w", err)
	}
	if got := hash(dump.ForHash(f.Data)); got != f.DataChecksum {
		return Checkpoint{}, fmt.Errorf("checkpoint is corrupted: data checksum %d, want %d", got, f.DataChecksum)
	}
	return Checkpoint{PolicyName: d.PolicyName, MachineState: d.MachineState, Entries: d.Entries}, nil
}
