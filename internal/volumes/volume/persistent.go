package volume

import (
	"context"
	"fmt"
	"io/fs"

	corev1 "k8s.io/api/core/v1"
)

// localVolumePlugin is the plugin directory of local persistent volumes
// below PodsDir/<uid>/volumes, as upstream's local-volume plugin; each is
// a bind mount of the volume's path named after the PersistentVolume.
const localVolumePlugin = "kubernetes.io~local-volume"

// setUpClaim sets up the volume of a persistentVolumeClaim or generic
// ephemeral volume and returns its host directory. The claim is resolved
// to its persistent volume once per pod (a bound claim stays bound to the
// same volume); later calls only check the volume is still in place
// (and, on a refresh, whether a CSI volume must be expanded).
func (m *Manager) setUpClaim(ctx context.Context, pod *corev1.Pod, v corev1.Volume, st *podState, refresh bool) (string, error) {
	c := st.claims[v.Name]
	if c == nil {
		var err error
		if c, err = m.resolveClaim(ctx, pod, v, st); err != nil {
			return "", err
		}
		st.claims[v.Name] = c
	}
	src := c.volume.Spec.PersistentVolumeSource
	if isBlock(c.volume) {
		switch {
		case src.Local != nil:
			return m.setUpLocalBlock(pod, c)
		case src.CSI != nil:
			return m.setUpCSIBlock(ctx, pod, v.Name, c, refresh)
		case src.FC != nil:
			return m.setUpFCBlock(pod, c)
		}
		if typ := persistentSourceType(src); removedTypes[typ] {
			return "", fmt.Errorf("PersistentVolume %s: %w", c.volume.Name, unsupported(typ))
		}
		return "", fmt.Errorf("PersistentVolume %s: type %s of volumeMode Block is not supported by berth yet", c.volume.Name, persistentSourceType(src))
	}
	switch {
	case src.HostPath != nil:
		return setUpHostPath(src.HostPath)
	case src.Local != nil:
		return m.setUpLocal(pod, v, c)
	case src.NFS != nil:
		return m.setUpNFS(pod, c.volume.Name, src.NFS, c.readOnly, c.volume.Spec.MountOptions)
	case src.CSI != nil:
		return m.setUpCSIClaim(ctx, pod, v, c, refresh)
	case src.FC != nil:
		fc, err := fcPersistent(c)
		if err != nil {
			return "", err
		}
		return m.setUpFC(pod, v.Name, fc)
	}
	return "", fmt.Errorf("PersistentVolume %s: %w", c.volume.Name, unsupported(persistentSourceType(src)))
}

// setUpLocal bind-mounts a local persistent volume's directory at
// PodsDir/<uid>/volumes/kubernetes.io~local-volume/<pv name> (read-only
// when the pod's claim asks for it) and, the first time and unless it is
// read-only, applies the pod's fsGroup to it, as upstream's local-volume
// plugin. A block device is first mounted as a filesystem (formatted
// when it has none) once for all its pods (mountLocalDevice), and that
// mount is bound; any other kind of file is refused.
func (m *Manager) setUpLocal(pod *corev1.Pod, v corev1.Volume, c *claimed) (string, error) {
	pv := c.volume
	path, info, err := statLocal(pv)
	if err != nil {
		return "", err
	}
	device := info.Mode()&fs.ModeDevice != 0 && info.Mode()&fs.ModeCharDevice == 0
	if !info.IsDir() && !device {
		return "", fmt.Errorf("local PersistentVolume %s: %q is neither a directory nor a block device", pv.Name, path)
	}
	dir, mounted, err := m.mountPoint(pod, localVolumePlugin, pv.Name)
	if err != nil {
		return "", err
	}
	if !mounted {
		m.localMu.Lock()
		src := path
		if device {
			src, err = m.mountLocalDevice(pv, path, c.readOnly)
		}
		if err == nil {
			err = m.cfg.Mounter.BindMount(src, dir, c.readOnly)
		}
		m.localMu.Unlock()
		if err != nil {
			return "", err
		}
	}
	return m.ownBindOnce(pod, v.Name, dir, !mounted, c.readOnly)
}

// ownBindOnce gives the bind dir of the pod's volume volName the pod's
// fsGroup the first time (fresh: just bound, or no ready marker yet) and
// unless readOnly, and records it in the ready marker, as upstream's
// local-volume and fc plugins own a bind once.
func (m *Manager) ownBindOnce(pod *corev1.Pod, volName, dir string, fresh, readOnly bool) (string, error) {
	marker := readyMarker(m.cfg.PodsDir, pod.UID, volName)
	ready, err := checkReady(marker, fresh)
	if err != nil || ready {
		return dir, err
	}
	if fsGroup, onRootMismatch := fsGroupOf(pod); fsGroup != nil && !readOnly {
		if err := setOwnershipAt(dir, *fsGroup, false, onRootMismatch); err != nil {
			return "", fmt.Errorf("set ownership: %w", err)
		}
	}
	return dir, setReady(marker)
}

// persistentSourceType names the set field of a PersistentVolume's source
// by its JSON name, for the errors of the sources (or modes) berth does
// not serve.
func persistentSourceType(s corev1.PersistentVolumeSource) string {
	return firstSet([]named{
		{s.HostPath != nil, "hostPath"},
		{s.Local != nil, "local"},
		{s.CSI != nil, "csi"},
		{s.NFS != nil, "nfs"},
		{s.ISCSI != nil, "iscsi"},
		{s.FC != nil, "fc"},
		{s.GCEPersistentDisk != nil, "gcePersistentDisk"},
		{s.AWSElasticBlockStore != nil, "awsElasticBlockStore"},
		{s.AzureDisk != nil, "azureDisk"},
		{s.AzureFile != nil, "azureFile"},
		{s.VsphereVolume != nil, "vsphereVolume"},
		{s.Cinder != nil, "cinder"},
		{s.PortworxVolume != nil, "portworxVolume"},
		{s.Glusterfs != nil, "glusterfs"},
		{s.RBD != nil, "rbd"},
		{s.CephFS != nil, "cephfs"},
		{s.FlexVolume != nil, "flexVolume"},
		{s.Flocker != nil, "flocker"},
		{s.Quobyte != nil, "quobyte"},
		{s.PhotonPersistentDisk != nil, "photonPersistentDisk"},
		{s.ScaleIO != nil, "scaleIO"},
		{s.StorageOS != nil, "storageos"},
	})
}
