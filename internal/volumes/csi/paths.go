package csi

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	utilstrings "k8s.io/utils/strings"
)

// Where a CSI volume lives on the node and what it is called, as
// upstream's pkg/volume/csi names them; upstream_test.go pins the names.
// Pure.

const (
	// volDataFile is the file in which the kubelet keeps what it needs to
	// tear a CSI volume down (upstream's volDataFileName): beside a
	// publication's target and beside a staging directory.
	volDataFile = "vol_data.json"
	// globalMount is the staging directory's name under its volume's
	// directory (upstream's globalMountInGlobalPath).
	globalMount = "globalmount"
	// mountDir is a publication's target under its volume's directory in
	// the pod (upstream's GetCSIMounterPath).
	mountDir = "mount"
	// volNameSep joins a driver's name and a volume's handle in the volume's
	// name (upstream's volNameSep).
	volNameSep = "^"
)

// TargetDir returns where a pod's CSI volume is published, the target
// path of NodePublishVolume: <podsDir>/<podUID>/volumes/kubernetes.io~csi/
// <specName, "/" escaped as "~">/mount (upstream's getTargetPath and
// GetCSIMounterPath). The volume's vol_data.json is beside it.
func TargetDir(podsDir string, podUID types.UID, specName string) string {
	return filepath.Join(podsDir, string(podUID), "volumes", utilstrings.EscapeQualifiedName(pluginName),
		utilstrings.EscapeQualifiedName(specName), mountDir)
}

// stagingDir returns where a persistent volume is staged, the staging
// target path of NodeStageVolume: <pluginsDir>/kubernetes.io/csi/<driver>/
// <sha256 of the handle, hex>/globalmount (upstream's makeDeviceMountPath).
// Its vol_data.json is beside it.
func stagingDir(pluginsDir, driver, handle string) string {
	sum := sha256.Sum256([]byte(handle))
	return filepath.Join(pluginsDir, pluginName, driver, fmt.Sprintf("%x", sum), globalMount)
}

// attachmentName returns the name of the VolumeAttachment of a volume to
// a node: csi-<sha256 of handle, driver and node, hex> (upstream's
// getAttachmentName).
func attachmentName(handle, driver, nodeName string) string {
	sum := sha256.Sum256([]byte(handle + driver + nodeName))
	return fmt.Sprintf("csi-%x", sum)
}

// inlineHandle returns the handle of a pod's inline CSI volume:
// csi-<sha256 of the pod's UID and the volume's name, hex> (upstream's
// makeVolumeHandle).
func inlineHandle(podUID types.UID, specName string) string {
	sum := sha256.Sum256([]byte(string(podUID) + specName))
	return fmt.Sprintf("csi-%x", sum)
}

// uniqueName returns the unique name of a persistent CSI volume:
// kubernetes.io/csi/<driver>^<handle> (upstream's GetUniqueVolumeName over
// the plugin's GetVolumeName).
func uniqueName(driver, handle string) string {
	return pluginName + "/" + driver + volNameSep + handle
}

// checkPathElement refuses a name that is to become one element of a
// path: empty, "." or "..", or holding a "/" (after the escaping the
// caller does) or a NUL.
func checkPathElement(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s is empty", what)
	case name == "." || name == "..":
		return fmt.Errorf("%s %q is not a valid path element", what, name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%s %q is not a valid path element", what, name)
	}
	return nil
}

// checkNames refuses a volume whose names cannot safely become paths:
// the pod's UID, the volume's name (escaped as upstream) and the driver's.
func checkNames(podUID types.UID, specName, driver string) error {
	return errors.Join(
		checkPathElement("pod UID", string(podUID)),
		checkPathElement("volume name", utilstrings.EscapeQualifiedName(specName)),
		checkPathElement("CSI driver name", driver),
	)
}
