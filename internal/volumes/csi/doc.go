// Package csi is the node side of CSI: the plugin manager's handler of
// CSI drivers (upstream's pkg/volume/csi RegistrationHandler and
// pkg/volume/csi/nodeinfomanager), the registry of the drivers registered
// on the node, a client of a driver's node service, and the Mounter that
// stages, publishes, expands and tears down the CSI volumes of pods for
// the volume manager (upstream's csiAttacher MountDevice and
// UnmountDevice, csiMountMgr SetUpAt and TearDownAt, and csiPlugin
// NodeExpand).
//
//	handler.go     Config, New, Handler: ValidatePlugin, RegisterPlugin,
//	               DeRegisterPlugin (pluginmanager.Handler)
//	startup.go     InitializeCSINode, InitError: the CSINode at start
//	drivers.go     Drivers, Driver: the registry, by driver name
//	versions.go    which advertised CSI version a driver is spoken to in,
//	               and upstream's refusals. Pure
//	nodeinfo.go    what a driver changes in the Node (AnnotationNodeID,
//	               topology labels) and the CSINode (its entry, the
//	               migrated plugins annotation, the owner). Pure
//	nodeapi.go     the reads and writes of the Node and the CSINode,
//	               serialized and retried
//	backoff.go     upstream's back-offs; retry on an injected clock
//	nodeclient.go  Timeout, Dial, NodeClient: a driver's node service;
//	               UncertainError: which of its failures leave an
//	               operation maybe in progress
//	mounter.go     Volume, MounterConfig, NewMounter, Mounter: SetUp,
//	               UniqueName, AttachRequired, RequiresRepublish;
//	               Published
//	publish.go     the stage and the publish of SetUp
//	teardown.go    TearDown: unpublish, and unstage after the last
//	               publication; the walk over every publication's
//	               vol_data.json
//	block.go       MapBlock, MapError: a persistent volume of volumeMode
//	               Block staged, published, checked to be a block device,
//	               bound at its global map path and linked in the pod
//	blockteardown.go UnmapBlock, UnmapPodBlocks, BlockVolumes: its
//	               tear-down, from the disk alone
//	loop.go        the loop device on a global map path's entry (the fd
//	               lock), through the loop ioctls
//	stats.go       VolumeStats: a volume's usage from its driver's
//	               NodeGetVolumeStats (GET_VOLUME_STATS), as upstream's
//	               metricsCsi (a block volume's at its global map entry)
//	expand.go      Expand: NodeExpandVolume of a published persistent
//	               volume (a block volume: its published device, a Block
//	               capability), its failures classified as upstream's
//	               (ExpandError, FailureOf)
//	inuse.go       VolumesInUse: the attachable volumes in use, for the
//	               Node's status.volumesInUse
//	driverobjects.go the informer of CSIDriver objects (Mounter.Run runs
//	               it; reads wait for its sync, as upstream's lister)
//	apiread.go     the Mounter's reads: the CSIDriver, the
//	               VolumeAttachment waited for, secrets, tokens
//	capability.go  what a driver is told and what the kubelet does: the
//	               CSIDriver's policy, lifecycle modes, access modes and
//	               capabilities, the fsGroup rule, the pod's information.
//	               Pure
//	paths.go       TargetDir, the staging directory, a block volume's
//	               paths (DeviceLink), the names of attachments, inline
//	               handles and volumes. Pure
//	voldata.go     vol_data.json: its keys, saving, loading; removing
//	               the directories of a volume
//	locks.go       one operation a volume at a time
//
// A driver's registration, as upstream's: its versions must include a
// CSI 1.x one, higher than that of a driver of the same name already
// registered; it enters Drivers; NodeGetInfo says its node ID, volume
// limit and topology; the Node gets the node ID in its
// csi.volume.kubernetes.io/nodeid annotation and the topology segments as
// labels (patched through the status subresource; a label the Node has
// with another value fails the registration), and the CSINode gets the
// driver's entry (created, owned by the Node, when missing). A failure
// anywhere unregisters the driver again. Deregistration removes the entry
// and the annotation's key; the labels stay. At start InitializeCSINode
// creates the CSINode, or adopts it, with the in-tree plugins berth
// migrates in its storage.alpha.kubernetes.io/migrated-plugins
// annotation; a CSINode owned by an earlier Node of the same name is
// deleted and made again.
//
// A volume's set-up, as upstream's: the driver registered; its CSIDriver
// object read (none: attach required, no pod information, fsGroup policy
// ReadWriteOnceWithFSType, persistent volumes only), the volume's
// lifecycle mode checked against it; a persistent volume of a driver that
// requires attach waits for its VolumeAttachment
// (csi-<sha256(handle+driver+node)>) to be attached, whose metadata is
// the publish context; with STAGE_UNSTAGE_VOLUME it is staged at
// <plugins>/kubernetes.io/csi/<driver>/<sha256(handle)>/globalmount; it is
// published at TargetDir with its volume context (the attributes, the
// pod's information, the service account's tokens). Each step's
// vol_data.json says what its tear-down needs, so that TearDown works from
// the target alone, after a restart too. A volume is unstaged when the
// last vol_data.json under the pods directory that names it goes.
//
// A persistent volume of volumeMode Block (MapBlock), as upstream's
// csiBlockMapper and MapBlockVolume, under <plugins>/kubernetes.io/csi/
// volumeDevices: its vol_data.json (specVolID, volumeHandle, driverName,
// nodeName, attachmentID) in <pv>/data; with STAGE_UNSTAGE_VOLUME staged
// at staging/<pv>; published at publish/<pv>/<pod uid> (the driver makes
// it; berth its parent), both with a Block capability, the access mode of
// the PersistentVolume, the publish context, readOnly, the secrets and
// (podInfoOnMount) the pod's information; no fsGroup, mount group,
// SELinux or tokens, as upstream. What the driver published must be a
// block device (symlinks followed; else a MapError of
// MapVolume.MapBlockVolume, the volume manager's FailedMapVolume event);
// it is bind-mounted at <pv>/dev/<pod uid>, the global map path's entry, a
// loop device attached to that entry (upstream's fd lock; found again by
// its backing file, never attached twice), and
// <pods>/<uid>/volumeDevices/kubernetes.io~csi/<pv> made a symlink to it:
// the containers' device. Names that cannot be one path element, and a
// volume named staging or publish, are refused before anything touches
// the disk. UnmapBlock undoes it in upstream's order: the loop device
// detached, the link removed, the entry unmounted and removed,
// NodeUnpublishVolume; once no pod has a publication under publish/<pv>,
// NodeUnstageVolume and the volume's directories go. UnmapPodBlocks finds
// a pod's block volumes on the disk (its links, publications and entries),
// so that a pod gone while berth was down is torn down too. An attachable
// block volume is in VolumesInUse while its data directory has its
// vol_data.json (from before the stage until after the unstage).
//
// The fake driver of the tests is csifake.
package csi
