// Package checkpoint is the device manager's checkpoint file,
// kubelet_internal_checkpoint in the device plugin directory, in
// upstream's format (pkg/kubelet/cm/devicemanager/checkpoint): JSON of
// {"Data": {"PodDeviceEntries": [...], "RegisteredDevices": {...}},
// "Checksum": n}, the checksum upstream's FNV-32a over the k8s.io/utils/dump
// rendering of Data. The types keep upstream's package and type names
// (checkpoint.checkpointData, checkpoint.PodDevicesEntry,
// checkpoint.DevicesPerNUMA) because the rendering, and so the checksum,
// names them. Pure but for Read and Write.
//
//	checkpoint.go  the format, Encode, Decode, Read, Write
package checkpoint
