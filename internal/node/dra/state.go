package dra

import (
	"encoding/json"
	"fmt"
	"hash/crc32"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/berthk8s/berth/internal/platform/checkpoint"
)

// StateFileName is the checkpoint of the prepared claims in the root
// directory, upstream's draManagerStateFileName.
const StateFileName = "dra_manager_state"

// The checkpoint's kind and version, upstream's (state.CheckpointKind and
// CheckpointAPIVersion).
const (
	checkpointKind       = "DRACheckpoint"
	checkpointAPIVersion = "checkpoint.dra.kubelet.k8s.io/v1"
)

// ClaimState is what is remembered of one claim that pods on the node use,
// upstream's state.ClaimInfoState: the JSON field names and their order are
// upstream's, so that either kubelet reads the other's checkpoint.
type ClaimState struct {
	ClaimUID  types.UID
	ClaimName string
	Namespace string
	// PodUIDs are the pods that reference the claim (a set, upstream's
	// sets.Set[string], which JSON renders as an object of empty objects).
	PodUIDs map[string]struct{}
	// DriverState holds, per driver with allocation results in the claim,
	// the devices its NodePrepareResources returned.
	DriverState map[string]DriverState
}

// DriverState is one driver's part of a claim, upstream's state.DriverState.
type DriverState struct {
	Devices []Device
	// SkipNodeOperations are the node operations every allocation result
	// of the driver skips. berth leaves it empty: upstream's gate
	// DRAOptionalNodeOperations is alpha and off, and a claim that skips
	// one is refused (claimStateOf).
	SkipNodeOperations []resourceapi.SkipNodeOperation `json:"skipNodeOperations,omitempty"`
}

// Device is one device a driver prepared for a claim, upstream's
// state.Device.
type Device struct {
	PoolName     string
	DeviceName   string
	ShareID      *types.UID
	RequestNames []string
	CDIDeviceIDs []string
}

// checkpointFile is the file's JSON: Data, the JSON of checkpointData, and
// its CRC-32 (IEEE), upstream's state.Checkpoint.
type checkpointFile struct {
	Data     string
	Checksum uint32
}

// checkpointData is upstream's state.CheckpointData.
type checkpointData struct {
	Kind               string       `json:"kind,omitempty"`
	APIVersion         string       `json:"apiVersion,omitempty"`
	ClaimInfoStateList []ClaimState `json:"ClaimInfoStateList"`
}

// encodeState renders the claims as upstream's checkpoint, in the order
// given.
func encodeState(claims []ClaimState) ([]byte, error) {
	data, err := json.Marshal(checkpointData{Kind: checkpointKind, APIVersion: checkpointAPIVersion, ClaimInfoStateList: claims})
	if err != nil {
		return nil, fmt.Errorf("encode DRA checkpoint data: %w", err)
	}
	return json.Marshal(checkpointFile{Data: string(data), Checksum: crc32.ChecksumIEEE(data)})
}

// decodeState reads upstream's checkpoint: the checksum must match its
// data. The kind and version are not checked, as upstream's (an older
// version with fewer fields reads as this one).
func decodeState(b []byte) ([]ClaimState, error) {
	var f checkpointFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode DRA checkpoint: %w", err)
	}
	if sum := crc32.ChecksumIEEE([]byte(f.Data)); sum != f.Checksum {
		return nil, fmt.Errorf("DRA checkpoint is corrupt: checksum %d, data sums to %d", f.Checksum, sum)
	}
	var d checkpointData
	if err := json.Unmarshal([]byte(f.Data), &d); err != nil {
		return nil, fmt.Errorf("decode DRA checkpoint data: %w", err)
	}
	for i, c := range d.ClaimInfoStateList {
		if c.ClaimName == "" || c.Namespace == "" {
			return nil, fmt.Errorf("DRA checkpoint entry %d names no claim", i)
		}
		if c.PodUIDs == nil {
			d.ClaimInfoStateList[i].PodUIDs = map[string]struct{}{}
		}
	}
	return d.ClaimInfoStateList, nil
}

// loadState reads dir/StateFileName; no file is no claim, and an empty
// checkpoint is written then, as upstream's checkpointer GetOrCreate does
// at start (the same bytes: its list is null).
func loadState(dir string) ([]ClaimState, error) {
	b, found, err := checkpoint.Read(dir, StateFileName)
	if err != nil {
		return nil, err
	}
	if !found {
		if err := storeState(dir, nil); err != nil {
			return nil, fmt.Errorf("create the DRA checkpoint: %w", err)
		}
		return nil, nil
	}
	claims, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("%w (drain the node and remove %s to start afresh)", err, StateFileName)
	}
	return claims, nil
}

// storeState replaces dir/StateFileName with the claims.
func storeState(dir string, claims []ClaimState) error {
	b, err := encodeState(claims)
	if err != nil {
		return err
	}
	return checkpoint.Write(dir, StateFileName, b)
}
