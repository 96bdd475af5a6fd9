// Command csi-mock-driver is a CSI driver for berth's end-to-end tests: it
// runs on the host beside berth, as a CSI node plugin and its
// node-driver-registrar sidecar would in a real cluster, and writes down
// every call it gets so that a test can assert what berth asked for.
//
// It serves upstream's e2e CSI mock
// (k8s.io/kubernetes/test/e2e/storage/drivers/csi-test/mock/service, the
// driver behind upstream's "CSI mock volume" specs) and does
// node-driver-registrar's job itself, since neither the kubernetes-csi
// drivers nor their sidecars are on the module proxy here:
//
//   - the CSI Identity, Node and Controller services on --csi-address, a
//     unix socket (a stale socket there is removed first);
//   - the pluginregistration/v1 Registration service on
//     <--registration-dir>/<--name>-reg.sock, created after the CSI socket
//     listens. GetInfo answers Type "CSIPlugin", Name --name, Endpoint the
//     absolute --csi-address, SupportedVersions ["1.0.0"].
//     NotifyRegistrationStatus is logged; when PluginRegistered is false the
//     driver stops and exits 1, as node-driver-registrar does;
//   - with --call-log FILE, one JSON object a line per gRPC call on either
//     socket, appended as it completes (see callLog);
//   - SIGTERM or SIGINT stops both servers, removes both sockets and exits 0.
//
// A test starts it before (or after) berth, with berth's registration
// directory, and stops it with SIGTERM:
//
//	csi-mock-driver --csi-address=$DIR/csi.sock \
//	    --registration-dir=<berth --root-dir>/plugins_registry \
//	    --call-log=$DIR/calls.jsonl --disable-attach
//
// Both socket paths must fit a unix socket address (107 bytes): keep $DIR
// short (os.MkdirTemp("", "csi"), not a deep t.TempDir()). The sockets
// exist once it listens; the registration socket appearing is the signal
// that both are up. "go test ./cmd/csi-mock-driver" in tools/kube runs it
// in-process the same way.
//
// What the mock does, read from its source at k8s.io/kubernetes v1.37.2:
//
//   - The node ID is the driver name: service.New sets nodeID to
//     Config.DriverName and nothing else sets it, so there is no --node-id.
//     NodeGetInfo answers node_id = --name; max_volumes_per_node =
//     --attach-limit when above 0 (else unset); accessible_topology
//     {"io.kubernetes.storage.mock/node": "some-mock-node"} with
//     --enable-topology (the key is fixed, whatever --name is), else unset.
//   - It knows three volumes, IDs "1", "2" and "3" (CreateVolume adds
//     more); NodeStageVolume and NodePublishVolume of any other ID fail with
//     NotFound, except NodePublishVolume of an inline ephemeral volume
//     (volume_context "csi.storage.k8s.io/ephemeral": "true"), any ID.
//     The v1.37.2 mock panics on such a publication (it reads the volume
//     it has not got) and would create no target: this binary serves them
//     itself (ephemeral.go), creating the target directory on publish and
//     removing it on unpublish.
//   - Without --disable-attach, NodeStageVolume and NodePublishVolume need
//     publish_context "device", which only ControllerPublishVolume (an
//     external-attacher) gives; a test without one passes --disable-attach
//     (and its CSIDriver says attachRequired: false). With it,
//     ControllerPublishVolume answers Unimplemented.
//   - It mounts nothing. NodePublishVolume creates the target directory
//     (its parent must exist) when missing; NodeUnpublishVolume removes the
//     target path, and everything under it. NodeStageVolume records the
//     staging path only. A repeated stage or publish of the same path
//     succeeds (idempotent).
//   - A NodePublishVolume with a Block capability gets, from this binary
//     (block.go), a real block device at its target, which the mock would
//     make a directory: the volume's sparse backing file (64 MiB, in a
//     temporary directory removed at exit) attached to a free loop device
//     through /dev/loop-control and LOOP_SET_FD (no losetup; autoclear
//     set), and the target a device node of it (mknod). Publications of
//     one volume share its loop device and data; the unpublication of the
//     last detaches it. Needs root.
//   - NodeGetVolumeStats of a volume published at the volume path answers
//     its capacity (100 GiB for "1", "2" and "3") in bytes, nothing else;
//     that of an inline volume the mock cannot answer (it knows no such
//     volume): this binary answers it with the statfs of the target, in
//     bytes and inodes.
//   - Node capabilities: STAGE_UNSTAGE_VOLUME and GET_VOLUME_STATS always,
//     EXPAND_VOLUME with --node-expansion-required, VOLUME_MOUNT_GROUP with
//     --enable-volume-mount-group.
//   - --permissive-target-path is accepted for upstream's sake: in this
//     release the check it relaxes (target path exists) builds an error and
//     drops it, so it changes nothing.
//
// For berth's tests only: it is no storage driver, keeps its state in
// memory, and logs CSI secrets along with the rest of each request.
package main
