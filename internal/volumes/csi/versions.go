package csi

import (
	"errors"
	"fmt"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

// pluginName is upstream's CSIPluginName, which prefixes its CSI plugin's
// messages.
const pluginName = "kubernetes.io/csi"

// Upstream's messages for a refused driver (validateVersions,
// ValidatePlugin); upstream_test.go pins them. The first argument of the
// first three names the calling method.
const (
	msgNoVersions = "%s for CSI driver %q failed. Plugin returned an empty list for supported versions"
	msgBadVersion = "%s for CSI driver %q failed. None of the versions specified %q are supported. err=%v"
	msgRegistered = "%s for CSI driver %q failed. Another driver with the same name is already registered with a higher supported version: %q"
	msgValidation = "validation failed for CSI Driver %s at endpoint %s: %w"
)

// logf formats a message the way upstream's CSI plugin does (its log
// helper): prefixed with the plugin's name.
func logf(format string, args ...any) string {
	return fmt.Sprintf(pluginName+": "+format, args...)
}

// highestVersion returns the highest of the versions a driver advertised
// that berth supports: CSI 1.x, as upstream (apimachinery's
// HighestSupportedVersion, which upstream uses: versions of major 2 and
// above are skipped, and the highest left must have major 1). Pure.
func highestVersion(caller, name string, versions []string) (*utilversion.Version, error) {
	if len(versions) == 0 {
		return nil, errors.New(logf(msgNoVersions, caller, name))
	}
	v, err := utilversion.HighestSupportedVersion(versions)
	if err != nil {
		return nil, errors.New(logf(msgBadVersion, caller, name, versions, err))
	}
	return v, nil
}

// checkExisting refuses a driver of version v when a driver of the same
// name is registered (existing, the zero Driver if none) with a version
// as high or higher, as upstream. Pure.
func checkExisting(caller, name string, existing Driver, v *utilversion.Version) error {
	if existing.Version != nil && !existing.Version.LessThan(v) {
		return errors.New(logf(msgRegistered, caller, name, existing.Version))
	}
	return nil
}
