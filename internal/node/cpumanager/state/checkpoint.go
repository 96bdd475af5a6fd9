package state

import (
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/utils/dump"

	"github.com/berthk8s/berth/internal/platform/checkpoint"
)

// FileName is the checkpoint's name in the root directory.
const FileName = "cpu_manager_state"

// Checkpoint is the checkpoint's content: the policy that wrote it, the
// shared pool and the exclusive CPUs of each container (pod UID ->
// container name -> cpuset), each a cpuset string.
type Checkpoint struct {
	PolicyName    string
	DefaultCPUSet string
	Entries       map[string]map[string]string
}

// checksum is upstream's checkpointmanager/checksum.Checksum.
type checksum uint64

// CPUManagerCheckpointV2 is upstream's v2 struct, the part of the file
// older kubelets read. Its name and field types are part of the checksum.
type CPUManagerCheckpointV2 struct {
	PolicyName    string                       `json:"policyName"`
	DefaultCPUSet string                       `json:"defaultCpuSet"`
	Entries       map[string]map[string]string `json:"entries,omitempty"`
	Checksum      checksum                     `json:"checksum"`
}

// data is upstream's CPUManagerCheckpointData (berth writes neither
// podEntries nor baselines: their gates are off).
type data struct {
	PolicyName    string                       `json:"policyName"`
	DefaultCPUSet string                       `json:"defaultCpuSet"`
	Entries       map[string]map[string]string `json:"entries,omitempty"`
}

// file is the v4 file: the v2 fields inline, then data and its checksum.
type file struct {
	CPUManagerCheckpointV2 `json:",inline"`
	Data                   string   `json:"data"`
	DataChecksum           checksum `json:"dataChecksum"`
	// PodEntries is read from v3 files only, to refuse them.
	PodEntries json.RawMessage `json:"podEntries,omitempty"`
}

// hash is upstream's FNV-32a over dump.ForHash (hashutil.DeepHashObject).
func hash(rendered string) checksum { return checksum(checkpoint.Hash(rendered)) }

// v2Checksum is the checksum of the v2 part: the struct rendered with
// Checksum 0, under the type name older kubelets had.
func v2Checksum(v CPUManagerCheckpointV2) checksum {
	v.Checksum = 0
	s := dump.ForHash(&v)
	s = strings.Replace(s, "CPUManagerCheckpointV2", "CPUManagerCheckpoint", 1)
	s = strings.Replace(s, "(state.checksum)", "(checksum.Checksum)", 1)
	return hash(s)
}

// Encode returns the file's bytes for c.
func Encode(c Checkpoint) ([]byte, error) {
	d, err := json.Marshal(data(c))
	if err != nil {
		return nil, fmt.Errorf("serialize cpu manager checkpoint data: %w", err)
	}
	f := file{Data: string(d), DataChecksum: hash(dump.ForHash(string(d)))}
	f.PolicyName, f.DefaultCPUSet, f.Entries = c.PolicyName, c.DefaultCPUSet, c.Entries
	f.Checksum = v2Checksum(f.CPUManagerCheckpointV2)
	return json.Marshal(f)
}

// Decode reads a file's bytes as upstream v1.37 does: the v4 data when it
// is there (its checksum must match), else the v2 fields (their checksum
// must match, or be 0, as upstream accepts from the old file backend).
func Decode(b []byte) (Checkpoint, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return Checkpoint{}, fmt.Errorf("deserialize cpu manager checkpoint: %w", err)
	}
	if f.Data != "" || f.DataChecksum != 0 {
		if got := hash(dump.ForHash(f.Data)); got != f.DataChecksum {
			return Checkpoint{}, fmt.Errorf("checkpoint is corrupted: checksum %d, want %d", got, f.DataChecksum)
		}
		var d data
		if err := json.Unmarshal([]byte(f.Data), &d); err != nil {
			return Checkpoint{}, fmt.Errorf("deserialize cpu manager checkpoint data: %w", err)
		}
		return Checkpoint(d), nil
	}
	if len(f.PodEntries) > 0 && string(f.PodEntries) != "{}" {
		return Checkpoint{}, fmt.Errorf("checkpoint has pod-level entries (PodLevelResourceManagers), which berth does not support")
	}
	if f.Checksum != 0 && !legacyChecksumMatches(f.CPUManagerCheckpointV2) {
		return Checkpoint{}, fmt.Errorf("checkpoint is corrupted: checksum %d matches neither its v3 nor its v2 content", f.Checksum)
	}
	return Checkpoint{PolicyName: f.PolicyName, DefaultCPUSet: f.DefaultCPUSet, Entries: f.Entries}, nil
}

// legacyChecksumMatches is how v1.37 verifies a file without data: as a
// v3 checkpoint (a struct CPUManagerCheckpointV3, or CPUManagerCheckpoint
// as older kubelets named it, with an empty podEntries map), then as a v2
// one (CPUManagerCheckpointV2 or CPUManagerCheckpoint).
func legacyChecksumMatches(v CPUManagerCheckpointV2) bool {
	want := v.Checksum
	v.Checksum = 0
	s := dump.ForHash(&v)
	s = strings.Replace(s, "(state.checksum)", "(checksum.Checksum)", 1)
	v3 := strings.Replace(s, " Checksum:(checksum.Checksum)0}", " PodEntries:(state.PodCPUAssignments)map[] Checksum:(checksum.Checksum)0}", 1)
	for _, base := range []string{v3, s} {
		for _, name := range []string{"CPUManagerCheckpointV3", "CPUManagerCheckpointV2", "CPUManagerCheckpoint"} {
			if hash(strings.Replace(base, "CPUManagerCheckpointV2", name, 1)) == want {
				return true
			}
		}
	}
	return false
}

// Read reads the checkpoint in dir; found is false when there is none.
func Read(dir string) (Checkpoint, bool, error) {
	return checkpoint.Load(dir, FileName, Decode)
}

// Write replaces the checkpoint in dir atomically.
func Write(dir string, c Checkpoint) error {
	return checkpoint.Store(dir, FileName, c, Encode)
}
