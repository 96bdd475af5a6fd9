// Package volume sets up the volumes a pod mounts — emptyDir, hostPath,
// configMap, secret, downwardAPI and projected (serviceAccountToken,
// configMap, secret, downwardAPI sources, among them the kube-api-access-*
// volume of every API pod, clusterTrustBundle and podCertificate
// sources), inline CSI volumes, image volumes (nothing on the host: the
// kubelet runtime pulls the image, the container runtime mounts it), and
// persistentVolumeClaim and generic ephemeral volumes whose claims are
// bound to hostPath, local, nfs, fc or CSI persistent volumes (an in-tree cloud
// source upstream migrates, as a persistent volume or inline, is its CSI
// driver's: migration.go) — keeps
// their content current while the pod runs, and tears them down after it
// terminated.
//
// Layout, as upstream: PodsDir/<uid>/volumes/<plugin>/<name>, with plugin
// kubernetes.io~empty-dir, ~configmap, ~secret, ~downward-api, ~projected,
// ~nfs (mounted with mount(8)), ~fc (fibre channel disks found under
// /dev/disk/by-path or by-id, mounted once at
// PluginsDir/kubernetes.io/fc/<disk> and bound; of volumeMode Block, linked
// at PodsDir/<uid>/volumeDevices/kubernetes.io~fc/<pv name>; detached from
// the host after their last pod, fc.go),
// kubernetes.io~local-volume/<pv name> for local persistent volumes (of
// volumeMode Block: a link to the device at
// PodsDir/<uid>/volumeDevices/kubernetes.io~local-volume/<pv name>, block.go) and
// kubernetes.io~csi/<pv or volume name>/mount for CSI volumes (published
// there by their driver through internal/volumes/csi; a CSI persistent
// volume of volumeMode Block is mapped by csi.Mounter.MapBlock and linked at
// PodsDir/<uid>/volumeDevices/kubernetes.io~csi/<pv name>, csi.go).
// hostPath volumes (inline or persistent) are the host path itself.
// Secret and projected volumes and emptyDir volumes of medium Memory are
// tmpfs mounts, local persistent volumes bind mounts (Mounter).
// configMap, secret, downwardAPI and projected content is written by the
// atomic writer (package atomicwriter).
//
// Pure decisions, each with table tests:
//
//	plugins.go    Classify: which plugin serves a volume, the unsupported-type error;
//	              Kind.Atomic: whether berth writes a volume's content (then
//	              containers mount it read-only and its directory is 0755);
//	              ForcedReadOnly: that, a claim the pod asks for read-only, or an image
//	migration.go  which in-tree sources go to their CSI drivers, and their translation
//	claims.go     checkClaim, checkBinding, checkVolumeMode: upstream's refusals of a
//	              claim and its volume; resolveClaim reads both from the API
//	payload.go    Payload: (pod, fetched objects, tokens, certificates) -> files, content and modes
//	downward.go   the downward API values and their key="value" format
//	hostpath.go   checkHostPath: the hostPath type checks over an injected stat
//	token.go      the TokenRequest of a projected token and when to refresh it
//	tmpfs.go      which volumes live on tmpfs and the tmpfs size
//	hugepages.go  the page size of an emptyDir of medium HugePages (hugetlbfs)
//	nfs.go        nfsMount: an nfs volume's source and options, as upstream's
//	fc.go         fcDiskOf, globalName, uniqueName, parseFCName: a fibre channel
//	              disk's identity and names, as upstream's (the disk search,
//	              mounts and detach beside them read and write the host)
//	gid.go        extraGroups: the supplemental groups claims' PVs add (pv.beta.kubernetes.io/gid)
//	nested.go     mount points of volumes mounted beneath a read-only one
//	ownership.go  fsGroup modes (SetVolumeOwnership), the OnRootMismatch test
//	              and the walk that applies them, inside an os.Root
//	mount.go      the Mounter interface and the mountinfo parser
//	statvolumes.go StatVolume: the claim (local, CSI, of either volumeMode) and inline CSI
//	              volumes whose plugin reports their usage, with their claim's name (a
//	              local block volume by its device's size); Manager.StatVolumes lists
//	              what each pod's last successful SetUp published, never waiting on a set-up
//	resize.go     planExpansion, expansionOutcome: the node's part of a claim's
//	              expansion, as upstream's (online when the PersistentVolume grew
//	              past the volume's size on the node; at mount when it exceeds the
//	              claim's status capacity; the legacy and the recovery paths)
//	resizestatus.go the claim's status after an expansion (capacity, resize
//	              status, resize conditions) and its patch, as upstream's resize_util
//
// Effects:
//
//	manager.go     Config, New, Manager, SetUp/Update/TearDown/Run, per-pod state;
//	               TearDown drops a pod's state, Forget (internal/pod/podgone) that
//	               of a pod gone without one
//	setup.go       one volume's set-up: directory, tmpfs, payload, ownership, hostPath;
//	               a claim no container uses is skipped, as upstream; each set-up
//	               until the pod's first full one is a stage of its start timeline
//	               (StageRecorder)
//	persistent.go  a claim's volume: resolved once per pod, then its hostPath, its
//	               local directory bound (read-only if asked) with the fsGroup (a local
//	               block device mounted first, once for its pods, block.go), or CSI;
//	               TearDown removes a bind's mount point only when it is empty,
//	               so the data of a volume is never removed with the pod
//	csi.go         CSI volumes through the CSI mounter (csi.Mounter): published once
//	               per boot of the machine (the marker holds the boot ID), the fsGroup
//	               applied when the driver's policy gives it to the kubelet;
//	               unpublished (and unstaged after the last pod) before anything
//	               of the pod is removed; a PersistentVolume of volumeMode Block
//	               mapped (MapBlock: its device link is the containers' device,
//	               no fsGroup) once per boot the same way, a failure upstream's
//	               FailedMapVolume event, and unmapped at TearDown
//	               (UnmapPodBlocks) before the links go
//	expand.go      the expansions: NodeExpandVolume (CSIExpander) right after a
//	               publication (or a block volume's map) and on Run's refresh for a
//	               published (or mapped) volume whose PersistentVolume grew; the
//	               claim's status patched, upstream's
//	               events on the pod and the claim (ClaimEventRecorder)
//	trustbundle.go the trust anchors of a projected clusterTrustBundle source, read
//	               from the API with upstream's rules and messages
//	ready.go       the on-disk ready marker: ownership was applied, never walk again
//	fetch.go       configMaps and secrets from Objects (internal/volumes/objectcache), tokens with their cache,
//	               a podCertificate source's key and chain from PodCertificates
//	               (internal/volumes/podcert: the volume is not ready until the
//	               first certificate is issued; each refresh round asks again);
//	               a failure that clears on its own (package transient: the node
//	               authorizer not knowing a new pod yet, a watch not yet listed, a
//	               throttled API, a certificate not issued yet) is retried there with a short back-off (200 ms,
//	               doubling, at most 5 s), so it neither fails the pod's sync nor
//	               waits out the pod worker's back-off; FailedMount is recorded only
//	               once the retries are used up
//	mount_linux.go SysMounter (mount(2)); mount_other.go a stub elsewhere
//
// Package subpath (volume/subpath) binds a container's subPath under
// PodsDir/<uid>/volume-subpaths for kuberuntime; TearDown has it unmount
// and remove those binds before anything of the pod is removed, and fails
// (so the pod directory stays) when one cannot be unmounted.
//
// State and concurrency: the Manager's mutex guards only the map of pods;
// each pod's state (set-up volumes, cached tokens, reported events) has its
// own mutex that serialises SetUp, Run's refresh and TearDown of that pod,
// so different pods set up in parallel. SetUp fetches a volume's content
// only the first time; after that Run re-fetches every minute (and at once
// after Update) and rewrites content only when it changed (the atomic
// writer compares); fsGroup ownership is applied once per volume, before
// its containers run, and recorded in a ready marker on disk
// (PodsDir/<uid>/plugins/kubernetes.io~empty-dir/<name>/ready, as
// upstream), so neither a refresh nor a restart of berth walks a volume
// in use;
// tokens are requested again once 80% of their lifetime passed or after a
// day, as upstream's token manager; a podCertificate source's certificate
// once its beginRefreshAt (plus jitter) passed, as upstream's
// podcertificate manager (package podcert decides, the refresh round asks).
package volume
