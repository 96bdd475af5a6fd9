package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Storage for the development cluster: local-provisioner (tools/provisioner)
// as a process on the host, beside the rest of the control plane, and the
// default StorageClass that names it, so that a claim without a class (a
// StatefulSet's volumeClaimTemplates, a generic ephemeral volume) gets a
// directory under VolumesDir as a `local` PV on the node. The class binds
// WaitForFirstConsumer (the scheduler picks the node first, the provisioner
// makes the volume there) and deletes the directory when the claim goes
// (reclaimPolicy Delete).
//
// The provisioner authenticates as ProvisionerUser, bound to the rules
// upstream's external-provisioner RBAC (kubernetes-csi/external-provisioner
// deploy/kubernetes/rbac.yaml) gives its service account, less what it
// needs only for CSI (csinodes, volumeattachments, snapshots, leases: no
// leader election).
const (
	// LocalProvisioner is the provisioner's binary name.
	LocalProvisioner = "local-provisioner"
	// ProvisionerUser is its user name.
	ProvisionerUser = "local-provisioner"
	// ProvisionerName is the StorageClass provisioner it answers for.
	ProvisionerName = "local.berth.dev"
	// DefaultStorageClass is the default StorageClass's name (kind's).
	DefaultStorageClass = "standard"
	// storageManifestFile holds its RBAC and the StorageClass.
	storageManifestFile = "storage.yaml"
)

// StorageBinaries are the binaries StartStorage needs beside Binaries.
func StorageBinaries() []string { return []string{LocalProvisioner} }

// ProvisionerArgs is local-provisioner's command line: volumes of node
// under l's VolumesDir, health on loopback.
func ProvisionerArgs(l Layout, node string) []string {
	return []string{
		"--kubeconfig=" + l.Path("local-provisioner.kubeconfig"),
		"--node-name=" + node,
		"--root=" + l.VolumesDir(),
		"--provisioner-name=" + ProvisionerName,
		"--healthz-address=" + loopback + ":" + strconv.Itoa(l.Ports.Provisioner),
		"-v=2",
	}
}

// VolumesDir is where local-provisioner makes the volumes' directories.
func (l Layout) VolumesDir() string { return l.Path("volumes") }

// StorageManifest is the provisioner's ClusterRole, bound to
// ProvisionerUser, and the default StorageClass.
func StorageManifest() string {
	return fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: berth:local-provisioner
rules:
- apiGroups: [""]
  resources: ["persistentvolumes"]
  verbs: ["get", "list", "watch", "create", "patch", "delete"]
- apiGroups: [""]
  resources: ["persistentvolumeclaims"]
  verbs: ["get", "list", "watch", "update"]
- apiGroups: ["storage.k8s.io"]
  resources: ["storageclasses"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["list", "watch", "create", "update", "patch"]
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: berth:local-provisioner
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: berth:local-provisioner
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: User
  name: %s
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: %s
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: %s
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
`, ProvisionerUser, DefaultStorageClass, ProvisionerName)
}

// StartStorage starts local-provisioner for nodeName (which need not be
// registered yet), its volumes under VolumesDir, and creates the default
// StorageClass; it returns once the provisioner is healthy. Stop stops it;
// the volumes' directories go with the cluster's directory.
func (c *Cluster) StartStorage(ctx context.Context, nodeName string) error {
	if err := CheckBinaries(c.binDir, StorageBinaries()...); err != nil {
		return err
	}
	l := c.layout
	kp, err := c.pki.ca.Issue(ClientSpec(ProvisionerUser))
	if err != nil {
		return err
	}
	if err := writeFile(l.Path("local-provisioner.kubeconfig"), Kubeconfig(l.APIServerURL(), c.pki.ca.KeyPair().CertPEM, ProvisionerUser, kp)); err != nil {
		return err
	}
	// The RBAC first: the provisioner's informers list at start.
	if err := c.apply(ctx, storageManifestFile, StorageManifest()); err != nil {
		return err
	}
	plain := &http.Client{Timeout: 5 * time.Second}
	return c.startComponent(ctx, LocalProvisioner, ProvisionerArgs(l, nodeName), plain, httpURL(l.Ports.Provisioner)+"/healthz")
}

// VolumesDir is where the provisioner makes the volumes' directories.
func (c *Cluster) VolumesDir() string { return c.layout.VolumesDir() }
