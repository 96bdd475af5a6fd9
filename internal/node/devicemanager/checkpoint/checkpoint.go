package checkpoint

import (
	"encoding/json"
	"fmt"

	"k8s.io/utils/dump"

	platformcheckpoint "github.com/berthk8s/berth/internal/platform/checkpoint"
)

// FileName is the checkpoint's name in the device plugin directory
// (upstream's kubeletDeviceManagerCheckpoint).
const FileName = "kubelet_internal_checkpoint"

// DevicesPerNUMA are a container's device IDs of one resource by the NUMA
// node they sit on (-1: none).
type DevicesPerNUMA map[int64][]string

// PodDevicesEntry is one container's devices of one resource and the
// plugin's Allocate response for them (a marshalled
// v1beta1.ContainerAllocateResponse).
type PodDevicesEntry struct {
	PodUID        string
	ContainerName string
	ResourceName  string
	DeviceIDs     DevicesPerNUMA
	AllocResp     []byte
}

// checkpointData is upstream's struct of the same name: its name is part
// of the checksum.
type checkpointData struct {
	PodDeviceEntries  []PodDevicesEntry
	RegisteredDevices map[string][]string
}

// file is upstream's Data: the content and its checksum.
type file struct {
	Data     checkpointData
	Checksum uint64
}

// Checkpoint is the checkpoint's content: every container's devices and
// the healthy devices of each registered resource.
type Checkpoint struct {
	Entries    []PodDevicesEntry
	Registered map[string][]string
}

// checksum is upstream's checksum.New over the data: FNV-32a of its
// dump.ForHash rendering.
func checksum(d checkpointData) uint64 {
	return uint64(platformcheckpoint.Hash(dump.ForHash(d)))
}

// Encode returns the file's bytes for c.
func Encode(c Checkpoint) ([]byte, error) {
	d := checkpointData{PodDeviceEntries: c.Entries, RegisteredDevices: c.Registered}
	b, err := json.Marshal(file{Data: d, Checksum: checksum(d)})
	if err != nil {
		return nil, fmt.Errorf("serialize device manager checkpoint: %w", err)
	}
	return b, nil
}

// Decode reads a file's bytes; a checksum that does not match the content
// is a corrupt checkpoint, as upstream's VerifyChecksum.
func Decode(b []byte) (Checkpoint, error) {
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return Checkpoint{}, fmt.Errorf("deserialize device manager checkpoint: %w", err)
	}
	// A zero value decodes as upstream's: null stays nil and [] or {}
	// empty, which their renderings (and so the checksum) tell apart.
	if got := checksum(f.Data); got != f.Checksum {
		return Checkpoint{}, fmt.Errorf("checkpoint is corrupted: checksum %d, want %d", got, f.Checksum)
	}
	return Checkpoint{Entries: f.Data.PodDeviceEntries, Registered: f.Data.RegisteredDevices}, nil
}

// Read reads the checkpoint in dir; found is false when there is none.
func Read(dir string) (Checkpoint, bool, error) {
	return platformcheckpoint.Load(dir, FileName, Decode)
}

// Write replaces the checkpoint in dir atomically.
func Write(dir string, c Checkpoint) error {
	return platformcheckpoint.Store(dir, FileName, c, Encode)
}
