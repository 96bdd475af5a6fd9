package csi

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/mount-utils"
	"k8s.io/utils/clock"
)

// Volume is a CSI volume of a pod, as the volume manager resolved it
// from the pod's spec (and the PersistentVolume its claim is bound to).
type Volume struct {
	// SpecName is the PersistentVolume's name, or the pod's volume name
	// for an inline volume.
	SpecName string
	// Driver is the CSI driver's name.
	Driver string
	// Handle is the PersistentVolume's volumeHandle; ignored for an inline
	// volume, whose handle is upstream's makeVolumeHandle of the pod's UID
	// and SpecName.
	Handle string
	// Inline is a CSI volume of the pod's spec (the Ephemeral lifecycle
	// mode); otherwise a PersistentVolume's (Persistent).
	Inline   bool
	ReadOnly bool
	FSType   string
	// MountOptions are the PersistentVolume's.
	MountOptions []string
	// Attributes are the volume attributes: the volume context.
	Attributes map[string]string
	// AccessModes are the PersistentVolume's; empty for an inline volume
	// (published ReadWriteOnce, as upstream).
	AccessModes []corev1.PersistentVolumeAccessMode
	// StageSecret and PublishSecret are the secrets NodeStageVolume and
	// NodePublishVolume are given (nil: none). An inline volume's
	// PublishSecret is read in the pod's namespace whatever its own says.
	StageSecret, PublishSecret *corev1.SecretReference
	// Block: the PersistentVolume is of volumeMode Block, mapped
	// (MapBlock), not mounted; Expand and VolumeStats then name its block
	// paths.
	Block bool
}

// handle is the volume's handle in pod podUID.
func (v Volume) handle(podUID types.UID) string {
	if v.Inline {
		return inlineHandle(podUID, v.SpecName)
	}
	return v.Handle
}

// MounterConfig is what a Mounter is built from.
type MounterConfig struct {
	// Drivers are the registered drivers. Required.
	Drivers *Drivers
	// Client watches CSIDriver objects (Mounter.Run), reads
	// VolumeAttachment objects and secrets, and requests service account
	// tokens. Required.
	Client kubernetes.Interface
	// NodeName is the node's name, which names VolumeAttachments. Required.
	NodeName string
	// PluginsDir is <root-dir>/plugins, under which volumes are staged.
	// Required.
	PluginsDir string
	// PodsDir is <root-dir>/pods, under which volumes are published (see
	// TargetDir). Required.
	PodsDir string
	// Clock times the wait for a VolumeAttachment. Required.
	Clock clock.Clock
	// IsMountPoint reports whether a path is a mount point (an error that
	// is fs.ErrNotExist when it is missing); nil is k8s.io/mount-utils'.
	IsMountPoint func(path string) (bool, error)
	// Block is what block volumes need of the host; its nil fields are
	// the host's.
	Block BlockHost
}

// BlockHost is what the set-up of block volumes does on the host (the
// fields of the zero value are the host's: k8s.io/mount-utils' binds, a
// stat, loop devices through their ioctls, loop.go).
type BlockHost struct {
	// BindMount binds source at target (an existing file) and Unmount
	// unmounts target: the global map path's entries.
	BindMount func(source, target string) error
	Unmount   func(target string) error
	// IsBlockDevice reports whether path (a symlink followed) is a block
	// device.
	IsBlockDevice func(path string) (bool, error)
	// AttachLoop keeps path (a global map path's entry) open by a loop
	// device, unless one has it already; DetachLoop detaches the loop
	// devices of path (none: nothing to do). Upstream's AttachFileDevice
	// and DetachFileDevice.
	AttachLoop, DetachLoop func(path string) error
}

// Mounter performs the node's side of CSI volumes: it stages a
// persistent volume, publishes a volume for a pod at TargetDir, and
// tears both down (upstream's csiAttacher MountDevice and UnmountDevice,
// and csiMountMgr SetUpAt and TearDownAt). What it needs to tear a volume
// down it keeps in vol_data.json files beside the targets and the staging
// directories, as upstream, so that TearDown works after a restart.
//
// Safe for concurrent use: operations on one volume (one driver and
// handle) run one at a time (the wait for its attachment aside);
// operations on different volumes run at once.
type Mounter struct {
	cfg          MounterConfig
	isMountPoint func(string) (bool, error)
	block        BlockHost
	locks        volumeLocks
	// csiDrivers is the informer of CSIDriver objects, which Run runs;
	// until it has synced, what reads a driver's object waits.
	csiDrivers *driverObjects
}

// Run runs the informer of CSIDriver objects until ctx ends; the
// Mounter's operations that read a driver's CSIDriver object wait for
// its first sync.
func (m *Mounter) Run(ctx context.Context) error {
	m.csiDrivers.run(ctx)
	return nil
}

// NewMounter builds a Mounter; it starts nothing (Run does).
func NewMounter(cfg MounterConfig) (*Mounter, error) {
	switch {
	case cfg.Drivers == nil:
		return nil, errors.New("CSI mounter needs the registry of drivers")
	case cfg.Client == nil:
		return nil, errors.New("CSI mounter needs an API client")
	case cfg.NodeName == "":
		return nil, errors.New("CSI mounter needs the node name")
	case cfg.PluginsDir == "", cfg.PodsDir == "":
		return nil, errors.New("CSI mounter needs the plugins and pods directories")
	case cfg.Clock == nil:
		return nil, errors.New("CSI mounter needs a clock")
	}
	m := &Mounter{cfg: cfg, isMountPoint: cfg.IsMountPoint, block: cfg.Block, csiDrivers: newDriverObjects(cfg.Client)}
	sys := mount.NewWithoutSystemd("")
	if m.isMountPoint == nil {
		m.isMountPoint = sys.IsMountPoint
	}
	b := &m.block
	if b.BindMount == nil {
		b.BindMount = func(source, target string) error { return sys.Mount(source, target, "", []string{"bind"}) }
	}
	if b.Unmount == nil {
		b.Unmount = sys.Unmount
	}
	if b.IsBlockDevice == nil {
		b.IsBlockDevice = isBlockDevice
	}
	if b.AttachLoop == nil {
		b.AttachLoop = attachLoop
	}
	if b.DetachLoop == nil {
		b.DetachLoop = detachLoop
	}
	return m, nil
}

// Published is what SetUp leaves to the caller.
type Published struct {
	// ApplyFSGroup: the caller applies the pod's fsGroup to the target
	// (the driver's fsGroupPolicy says the kubelet does, and the driver
	// did not take it as the volume mount group).
	ApplyFSGroup bool
}

// UniqueName returns the unique name of a persistent volume, the name
// upstream reports in the Node's status.volumesInUse while the volume is
// in use (for a driver that requires attach: see AttachRequired):
// kubernetes.io/csi/<driver>^<handle>. An inline volume has none ("").
func (m *Mounter) UniqueName(v Volume) string {
	if v.Inline {
		return ""
	}
	return uniqueName(v.Driver, v.Handle)
}

// AttachRequired reports whether a volume is attached to the node before
// it is published (upstream's CanAttach): never an inline volume; a
// persistent one unless its driver's CSIDriver object says attachRequired
// false. Only such volumes go in status.volumesInUse.
func (m *Mounter) AttachRequired(ctx context.Context, v Volume) (bool, error) {
	if v.Inline {
		return false, nil
	}
	p, err := m.driverPolicy(ctx, v.Driver)
	return p.AttachRequired, err
}

// RequiresRepublish reports whether the volume's driver wants SetUp
// called again while the volume is published, as upstream's
// RequiresRemount (its CSIDriver's requiresRepublish; no object: no).
func (m *Mounter) RequiresRepublish(ctx context.Context, v Volume) (bool, error) {
	p, err := m.driverPolicy(ctx, v.Driver)
	return p.RequiresRepublish, err
}

// SetUp makes v available to pod at TargetDir(PodsDir, pod.UID,
// v.SpecName), as upstream's MountDevice then SetUpAt: the driver must be
// registered and, by its CSIDriver object, support v's lifecycle mode; a
// persistent volume of a driver that requires attach is published once
// its VolumeAttachment is attached (waiting until ctx ends), with its
// attachment metadata as the publish context; with STAGE_UNSTAGE_VOLUME
// it is staged first (every time: NodeStageVolume is idempotent). A
// failure of NodeStageVolume or NodePublishVolume that may leave the
// volume half done is an UncertainError.
func (m *Mounter) SetUp(ctx context.Context, pod *corev1.Pod, v Volume) (Published, error) {
	if pod == nil {
		return Published{}, fmt.Errorf("set up CSI volume %q: no pod", v.SpecName)
	}
	if err := checkNames(pod.UID, v.SpecName, v.Driver); err != nil {
		return Published{}, fmt.Errorf("set up CSI volume %q: %w", v.SpecName, err)
	}
	handle := v.handle(pod.UID)
	if handle == "" {
		return Published{}, fmt.Errorf("set up CSI volume %q: the volume handle is empty", v.SpecName)
	}
	log := klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "volume", v.SpecName, "driver", v.Driver, "volumeHandle", handle)
	ctx = klog.NewContext(ctx, log)
	pub, err := m.setUp(ctx, pod, v, handle, false)
	if err != nil {
		return Published{}, fmt.Errorf("set up CSI volume %q: %w", v.SpecName, err)
	}
	log.V(4).Info("Published CSI volume", "target", TargetDir(m.cfg.PodsDir, pod.UID, v.SpecName))
	return pub, nil
}

// Republish publishes a volume SetUp published before again, without
// staging it, when its CSIDriver has requiresRepublish (so that the
// driver gets fresh service account tokens), as upstream's remount of
// such volumes on the pod's syncs; it reports whether it did.
func (m *Mounter) Republish(ctx context.Context, pod *corev1.Pod, v Volume) (bool, error) {
	again, err := m.RequiresRepublish(ctx, v)
	if err != nil || !again {
		return false, err
	}
	if pod == nil {
		return false, fmt.Errorf("republish CSI volume %q: no pod", v.SpecName)
	}
	if err := checkNames(pod.UID, v.SpecName, v.Driver); err != nil {
		return false, fmt.Errorf("republish CSI volume %q: %w", v.SpecName, err)
	}
	handle := v.handle(pod.UID)
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithValues("pod", klog.KObj(pod), "volume", v.SpecName, "driver", v.Driver, "volumeHandle", handle))
	if _, err := m.setUp(ctx, pod, v, handle, true); err != nil {
		return false, fmt.Errorf("republish CSI volume %q: %w", v.SpecName, err)
	}
	return true, nil
}

// setUp stages (unless republish: staged before) and publishes v.
func (m *Mounter) setUp(ctx context.Context, pod *corev1.Pod, v Volume, handle string, republish bool) (Published, error) {
	var fsPolicy storagev1.FSGroupPolicy
	s, err := m.open(ctx, v, handle, func(p driverPolicy) (err error) {
		fsPolicy, err = fsGroupPolicy(p)
		return err
	})
	if err != nil {
		return Published{}, err
	}
	defer s.close()
	p := publication{pod: pod, v: v, handle: handle, publishContext: s.publishContext, policy: s.policy, caps: s.caps}
	if !v.Inline && s.caps.StageUnstageVolume {
		p.staging = stagingDir(m.cfg.PluginsDir, v.Driver, handle)
		if !republish {
			if err := m.stage(ctx, s.client, p); err != nil {
				return Published{}, err
			}
		}
	}
	if err := m.publish(ctx, s.client, p); err != nil {
		return Published{}, err
	}
	return Published{ApplyFSGroup: applyFSGroup(fsGroupInputs{
		Policy: fsPolicy, FSGroup: podFSGroup(pod), ReadOnly: v.ReadOnly, FSType: v.FSType,
		Inline: v.Inline, AccessModes: v.AccessModes, MountGroup: s.caps.VolumeMountGroup,
	})}, nil
}

// session is what the set-up of a volume (SetUp, MapBlock) learnt before
// it calls the driver, holding the volume's lock.
type session struct {
	client *NodeClient
	caps   NodeCapabilities
	policy driverPolicy
	// publishContext is the VolumeAttachment's attachment metadata.
	publishContext map[string]string
	unlock         func()
}

func (s *session) close() {
	s.unlock()
	s.client.Close()
}

// open checks that v's driver is registered and, by its CSIDriver
// object, serves v's lifecycle mode; waits for the VolumeAttachment of a
// persistent volume whose driver requires attach; dials the driver, asks
// its capabilities and locks the volume. check (nil: none) refuses a
// policy before anything is waited for. The caller closes the session.
func (m *Mounter) open(ctx context.Context, v Volume, handle string, check func(driverPolicy) error) (*session, error) {
	if _, ok := m.cfg.Drivers.Driver(v.Driver); !ok {
		return nil, fmt.Errorf(msgNoDriver, v.Driver)
	}
	policy, err := m.driverPolicy(ctx, v.Driver)
	if err != nil {
		return nil, err
	}
	if err := checkLifecycle(policy, v.Driver, lifecycleMode(v.Inline)); err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(policy); err != nil {
			return nil, err
		}
	}
	var publishContext map[string]string
	if !v.Inline && policy.AttachRequired {
		if publishContext, err = m.waitAttached(ctx, v.Driver, handle); err != nil {
			return nil, err
		}
	}
	client, err := m.cfg.Drivers.Dial(v.Driver)
	if err != nil {
		return nil, err
	}
	caps, err := client.NodeGetCapabilities(ctx)
	if err != nil {
		client.Close()
		return nil, fmt.Errorf("get node capabilities of CSI driver %q: %w", v.Driver, err)
	}
	unlock, err := m.locks.lock(ctx, uniqueName(v.Driver, handle))
	if err != nil {
		client.Close()
		return nil, err
	}
	return &session{client: client, caps: caps, policy: policy, publishContext: publishContext, unlock: unlock}, nil
}
