package volume

import (
	"errors"
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"
)

// Kind is a volume plugin berth implements.
type Kind int

const (
	KindEmptyDir Kind = iota + 1
	KindHostPath
	KindConfigMap
	KindSecret
	KindDownwardAPI
	KindProjected
	// KindClaim is a persistentVolumeClaim or a generic ephemeral volume:
	// served by the plugin of the persistent volume bound to its claim
	// (setUpClaim).
	KindClaim
	// KindCSI is an inline CSI volume (ephemeral lifecycle), published by
	// its driver (setUpCSI).
	KindCSI
	// KindMigrated is an inline in-tree volume (awsElasticBlockStore,
	// gcePersistentDisk, ...) whose plugin upstream migrates to CSI:
	// served by the plugin's CSI driver as the translation gives it
	// (migratedInlineCSI).
	KindMigrated
	// KindNFS is an inline nfs volume, mounted with mount(8) (setUpNFS).
	KindNFS
	// KindFC is an inline fibre channel volume: its disk found on the
	// host, mounted and bound (setUpFC).
	KindFC
	// KindImage is an image volume: nothing on the host; the kubelet
	// runtime pulls the image and the container runtime mounts it
	// read-only (upstream's kubernetes.io/image plugin does nothing either).
	KindImage
)

// PluginDir returns the directory name of the plugin below
// <pods>/<uid>/volumes, as upstream ("" for hostPath, which has none, and
// for a claim, whose persistent volume decides).
func (k Kind) PluginDir() string {
	switch k {
	case KindEmptyDir:
		return "kubernetes.io~empty-dir"
	case KindConfigMap:
		return "kubernetes.io~configmap"
	case KindSecret:
		return "kubernetes.io~secret"
	case KindDownwardAPI:
		return "kubernetes.io~downward-api"
	case KindProjected:
		return "kubernetes.io~projected"
	case KindCSI, KindMigrated:
		return csiPlugin
	case KindNFS:
		return nfsPlugin
	case KindFC:
		return fcPlugin
	}
	return ""
}

// onTmpfs reports whether the plugin's directory is a tmpfs regardless of
// the volume's spec: secrets and projected volumes, as upstream, never touch
// a disk.
func (k Kind) onTmpfs() bool { return k == KindSecret || k == KindProjected }

// Atomic reports whether berth writes the plugin's content (with the
// atomic writer): configMap, secret, downwardAPI and projected. It is the
// one answer to "is this a volume whose contents berth writes", and what
// follows from it: containers mount such a volume read-only whatever the
// volumeMount says (upstream since CVE-2017-1002102; berth's writer would
// otherwise refresh a directory the pod can plant symlinks in), and its
// directory is not world-writable (dirMode).
func (k Kind) Atomic() bool {
	return k == KindConfigMap || k == KindSecret || k == KindDownwardAPI || k == KindProjected
}

// dirMode is the mode of the plugin's volume directory. emptyDir is 0777
// as upstream's, so that a container of any user can write to it; berth
// writes the content of the others, which containers only read.
func (k Kind) dirMode() fs.FileMode {
	if k.Atomic() {
		return 0o755
	}
	return 0o777
}

// ForcedReadOnly reports whether containers mount the volume read-only
// whatever their volumeMount says: a volume whose content berth writes
// (Kind.Atomic), and a claim or inline CSI volume the pod asks for
// read-only (as upstream's mounters' ReadOnly attribute), and an image
// volume.
func ForcedReadOnly(v corev1.Volume) bool {
	if c := v.PersistentVolumeClaim; c != nil && c.ReadOnly {
		return true
	}
	if c := v.CSI; c != nil && c.ReadOnly != nil && *c.ReadOnly {
		return true
	}
	if n := v.NFS; n != nil && n.ReadOnly {
		return true
	}
	if f := v.FC; f != nil && f.ReadOnly {
		return true
	}
	kind, err := Classify(v)
	return err == nil && (kind.Atomic() || kind == KindImage)
}

// Classify returns the plugin of a volume, or an error naming the type
// berth does not support (SetUp prefixes it with the volume's name).
func Classify(v corev1.Volume) (Kind, error) {
	s := v.VolumeSource
	switch {
	case s.EmptyDir != nil:
		return KindEmptyDir, nil
	case s.HostPath != nil:
		return KindHostPath, nil
	case s.ConfigMap != nil:
		return KindConfigMap, nil
	case s.Secret != nil:
		return KindSecret, nil
	case s.DownwardAPI != nil:
		return KindDownwardAPI, nil
	case s.PersistentVolumeClaim != nil, s.Ephemeral != nil:
		return KindClaim, nil
	case s.CSI != nil:
		return KindCSI, nil
	case s.Image != nil:
		return KindImage, nil
	case s.NFS != nil:
		return KindNFS, nil
	case s.FC != nil:
		return KindFC, nil
	case migratedPlugin(nil, &v) != "":
		return KindMigrated, nil
	case s.Projected != nil:
		return KindProjected, nil
	}
	return 0, unsupported(sourceType(s))
}

// removedTypes are the volume types Kubernetes removed from its tree
// without a CSI migration: the upstream kubelet has no plugin for them
// either (cmd/kubelet/app/plugins.go), and fails them with "no volume
// plugin matched".
var removedTypes = map[string]bool{
	"glusterfs": true, "rbd": true, "cephfs": true, "flocker": true, "quobyte": true,
	"photonPersistentDisk": true, "scaleIO": true, "storageos": true,
}

// unsupported is the error of a volume type berth does not serve. Those
// the upstream kubelet refuses too say so, with what to use instead: the
// removed types, and gitRepo, whose plugin upstream turned off for good in
// 1.36 (GitRepoVolumeDriver, locked off); the others are berth's gaps.
func unsupported(typ string) error {
	switch {
	case typ == "gitRepo":
		return errors.New("type gitRepo: the git-repo volume plugin has been disabled (feature gate GitRepoVolumeDriver is off and locked since Kubernetes 1.36, as on the upstream kubelet); clone the repository into an emptyDir from an init container instead")
	case removedTypes[typ]:
		return fmt.Errorf("type %s has no volume plugin: it was removed from Kubernetes, and the upstream kubelet refuses it too (no volume plugin matched); use the storage's CSI driver instead", typ)
	}
	return fmt.Errorf("type %s is not supported by berth yet", typ)
}

// named is one field of a volume source: whether it is set, and its JSON
// name.
type named struct {
	set  bool
	name string
}

// firstSet is the name of the first set field, "<unknown>" for none.
func firstSet(fields []named) string {
	for _, f := range fields {
		if f.set {
			return f.name
		}
	}
	return "<unknown>"
}

// sourceType names the set field of an unsupported volume source by its
// JSON name.
func sourceType(s corev1.VolumeSource) string {
	return firstSet([]named{
		{s.Image != nil, "image"},
		{s.NFS != nil, "nfs"},
		{s.ISCSI != nil, "iscsi"},
		{s.GCEPersistentDisk != nil, "gcePersistentDisk"},
		{s.AWSElasticBlockStore != nil, "awsElasticBlockStore"},
		{s.GitRepo != nil, "gitRepo"},
		{s.Glusterfs != nil, "glusterfs"},
		{s.RBD != nil, "rbd"},
		{s.FlexVolume != nil, "flexVolume"},
		{s.Cinder != nil, "cinder"},
		{s.CephFS != nil, "cephfs"},
		{s.Flocker != nil, "flocker"},
		{s.FC != nil, "fc"},
		{s.AzureFile != nil, "azureFile"},
		{s.AzureDisk != nil, "azureDisk"},
		{s.VsphereVolume != nil, "vsphereVolume"},
		{s.Quobyte != nil, "quobyte"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk"},
		{s.PortworxVolume != nil, "portworxVolume"},
		{s.ScaleIO != nil, "scaleIO"},
		{s.StorageOS != nil, "storageos"},
	})
}
