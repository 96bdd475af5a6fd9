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

// The names of a block volume's paths (upstream's csi_block.go and
// csi_util.go; upstream_test.go pins them).
const (
	// volumeDevicesDir holds the block volumes, below the plugin's
	// directory and below a pod's (upstream's GetVolumeDevicePluginDir,
	// GetPodVolumeDeviceDir).
	volumeDevicesDir = "volumeDevices"
	blockStagingDir  = "staging"
	blockPublishDir  = "publish"
	blockDataDir     = "data"
	blockMapDir      = "dev"
)

// blockPaths are the paths of a persistent volume of volumeMode Block on
// the node (upstream's csiBlockMapper), for one pod.
type blockPaths struct {
	// staging is NodeStageVolume's staging_target_path:
	// <plugins>/kubernetes.io/csi/volumeDevices/staging/<specName>.
	staging string
	// publishDir is <plugins>/kubernetes.io/csi/volumeDevices/publish/
	// <specName>, which berth makes; publish is its <podUID>, the target
	// path of NodePublishVolume, which the driver makes.
	publishDir, publish string
	// volumeDir is <plugins>/kubernetes.io/csi/volumeDevices/<specName,
	// escaped>; data (its data/) holds the vol_data.json; globalMap (its
	// dev/) holds, as <podUID>, a bind mount of each pod's publication.
	volumeDir, data, globalMap string
	// podMap is globalMap/<podUID>.
	podMap string
	// link is <pods>/<podUID>/volumeDevices/kubernetes.io~csi/<specName>,
	// the pod's symlink to the published device, which containers get.
	link string
}

// newBlockPaths returns the paths of block volume specName in pod podUID.
func newBlockPaths(pluginsDir, podsDir string, podUID types.UID, specName string) blockPaths {
	root := filepath.Join(pluginsDir, pluginName, volumeDevicesDir)
	volumeDir := filepath.Join(root, utilstrings.EscapeQualifiedName(specName))
	publishDir := filepath.Join(root, blockPublishDir, specName)
	globalMap := filepath.Join(volumeDir, blockMapDir)
	return blockPaths{
		staging:    filepath.Join(root, blockStagingDir, specName),
		publishDir: publishDir,
		publish:    filepath.Join(publishDir, string(podUID)),
		volumeDir:  volumeDir,
		data:       filepath.Join(volumeDir, blockDataDir),
		globalMap:  globalMap,
		podMap:     filepath.Join(globalMap, string(podUID)),
		link:       DeviceLink(podsDir, podUID, specName),
	}
}

// DeviceLink returns where a pod's CSI block volume is linked to its
// device: <podsDir>/<podUID>/volumeDevices/kubernetes.io~csi/<specName>
// (upstream's GetPodDeviceMapPath), the host path of the containers'
// device.
func DeviceLink(podsDir string, podUID types.UID, specName string) string {
	return filepath.Join(podsDir, string(podUID), volumeDevicesDir, utilstrings.EscapeQualifiedName(pluginName), specName)
}

// checkBlockNames refuses a block volume whose names cannot safely become
// paths: those of checkNames, the volume's name unescaped too (upstream
// puts it in the staging and publish paths as it is), and the names of
// the plugin's own directories beside the volumes' (a volume "staging"
// would be the staging directory of every volume).
func checkBlockNames(podUID types.UID, specName, driver string) error {
	if err := checkNames(podUID, specName, driver); err != nil {
		return err
	}
	if err := checkPathElement("volume name", specName); err != nil {
		return err
	}
	if specName == blockStagingDir || specName == blockPublishDir {
		return fmt.Errorf("volume name %q of a block volume is the name of a directory of the CSI plugin's", specName)
	}
	return nil
}
