// Command local-provisioner is the dynamic provisioner of berth's
// development cluster: it runs on the host beside the control plane (as the
// rest of it does) and gives each claim of its StorageClass a directory of
// its own under --root, as a `local` PersistentVolume pinned to the one
// node it serves.
//
// It is the provision controller of
// sigs.k8s.io/sig-storage-lib-external-provisioner (the library behind the
// kubernetes-sigs external provisioners: the claim and volume queues, the
// selected-node handshake with the scheduler, the finalizer, events and
// retries) around a Provisioner of a few dozen lines:
//
//   - Provision: for a claim of a class whose provisioner is
//     --provisioner-name, on the node the scheduler selected
//     (volume.kubernetes.io/selected-node, set under WaitForFirstConsumer)
//     or, for an Immediate class, on --node-name. A claim for another node
//     is ignored (another instance, for that node, may take it). It makes
//     <root>/<pv name> (mode 0777, so that pods of any user can write, as
//     rancher's local-path-provisioner does) and returns a `local` PV of
//     the claim's size and access modes, Filesystem mode, with the class's
//     reclaim policy and node affinity kubernetes.io/hostname In [the
//     node's hostname label]. The size is not enforced: the directory is on
//     the host's filesystem. Block claims, claims with a selector and class
//     parameters or mountOptions are refused with a ProvisioningFailed
//     event.
//   - Delete (reclaim policy Delete, the claim gone): removes the PV's
//     directory, only if it is <root>/<pv name>; anything else is refused,
//     so a PV edited to point elsewhere is never removed from the host.
//
// Flags: --kubeconfig, --node-name, --root, --provisioner-name (default
// DefaultProvisionerName), --healthz-address (plain HTTP on loopback,
// /healthz answers 200 once the controller runs; empty: none), and klog's
// (-v). No leader election: one process serves one node. SIGTERM or SIGINT
// stops it.
//
// test/cluster (storage.go) starts it with a client certificate bound to
// the RBAC upstream's external-provisioner asks for, and creates the
// default StorageClass that names it.
package main
