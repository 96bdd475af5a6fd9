package userns

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MappingsFile is the file in a pod's directory that holds its user
// namespace mapping (upstream mappingsFile): a restarted berth reads it
// back, so a pod keeps its IDs; it is removed when the pod's mapping is
// released.
const MappingsFile = "userns"

// maxFileSize bounds what is read of a mappings file; berth writes about
// 120 bytes.
const maxFileSize = 4096

// fileContent is the mappings file's JSON, upstream's userNamespace type.
type fileContent struct {
	UIDMappings []fileMapping `json:"uidMappings"`
	GIDMappings []fileMapping `json:"gidMappings"`
}

// fileMapping is upstream's idMapping.
type fileMapping struct {
	HostID      uint32 `json:"hostId"`
	ContainerID uint32 `json:"containerId"`
	Length      uint32 `json:"length"`
}

// Encode returns the mappings file's content for m: one UID and one GID
// mapping, both from container ID 0, in upstream's format.
func Encode(m Mapping) []byte {
	one := []fileMapping{{HostID: m.HostID, ContainerID: 0, Length: m.Length}}
	b, err := json.Marshal(fileContent{UIDMappings: one, GIDMappings: one})
	if err != nil {
		panic(fmt.Sprintf("encode user namespace mappings: %v", err)) // cannot happen: plain integers
	}
	return b
}

// Decode reads a mappings file's content, accepting only what berth and
// upstream write (upstream parseUserNsFileAndRecord, with its messages):
// exactly one mapping, the same for UIDs and GIDs, from container ID 0.
func Decode(content []byte) (Mapping, error) {
	var f fileContent
	if err := json.Unmarshal(content, &f); err != nil {
		return Mapping{}, fmt.Errorf("invalid user namespace mappings file: %w", err)
	}
	switch {
	case len(f.UIDMappings) != 1:
		return Mapping{}, errors.New("invalid user namespace configuration: no more than one mapping allowed.")
	case len(f.UIDMappings) != len(f.GIDMappings):
		return Mapping{}, errors.New("invalid user namespace configuration: GID and UID mappings should be identical.")
	case f.UIDMappings[0] != f.GIDMappings[0]:
		return Mapping{}, errors.New("invalid user namespace configuration: GID and UID mapping should be identical")
	case f.UIDMappings[0].ContainerID != 0:
		return Mapping{}, errors.New("invalid user namespace configuration: UID 0 must be mapped")
	}
	return Mapping{HostID: f.UIDMappings[0].HostID, Length: f.UIDMappings[0].Length}, nil
}
