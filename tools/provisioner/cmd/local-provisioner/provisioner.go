package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// DefaultProvisionerName is the StorageClass provisioner it answers for.
const DefaultProvisionerName = "local.berth.dev"

// dirMode is each volume directory's mode: writable by pods of any user.
const dirMode = 0o777

// localProvisioner makes a directory per claim under root, on the host of
// node. Its fields are set once; it is safe for concurrent use (the
// controller calls it from several workers).
type localProvisioner struct {
	client kubernetes.Interface
	node   string
	root   string
}

var _ controller.Provisioner = (*localProvisioner)(nil)

// Provision makes the claim's directory and returns its PV.
func (p *localProvisioner) Provision(ctx context.Context, opts controller.ProvisionOptions) (*corev1.PersistentVolume, controller.ProvisioningState, error) {
	logger := klog.FromContext(ctx).WithValues("pvc", klog.KObj(opts.PVC), "pv", opts.PVName)
	node := opts.SelectedNodeName
	if node == "" {
		node = p.node // an Immediate class: this provisioner's node
	}
	if node != p.node {
		logger.V(2).Info("Claim is for another node", "selectedNode", node, "node", p.node)
		return nil, controller.ProvisioningFinished, &controller.IgnoredError{Reason: fmt.Sprintf("the claim is for node %q, this provisioner serves %q", node, p.node)}
	}
	if err := checkClaim(opts); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	n, err := p.client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return nil, controller.ProvisioningNoChange, fmt.Errorf("get node %q: %w", node, err)
	}
	hostname := n.Labels[corev1.LabelHostname]
	if hostname == "" {
		return nil, controller.ProvisioningFinished, fmt.Errorf("node %q has no %s label", node, corev1.LabelHostname)
	}
	dir := filepath.Join(p.root, opts.PVName)
	if err := makeDir(dir); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	logger.Info("Provisioned", "path", dir)
	return persistentVolume(opts, dir, hostname), controller.ProvisioningFinished, nil
}

// Delete removes the PV's directory, if it is this provisioner's.
func (p *localProvisioner) Delete(ctx context.Context, pv *corev1.PersistentVolume) error {
	dir, err := p.volumeDir(pv)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove volume directory %q: %w", dir, err)
	}
	klog.FromContext(ctx).Info("Deleted", "pv", pv.Name, "path", dir)
	return nil
}

// volumeDir is the directory Provision made for pv: <root>/<pv name>, the
// path of its local source. Anything else is refused.
func (p *localProvisioner) volumeDir(pv *corev1.PersistentVolume) (string, error) {
	if err := checkName(pv.Name); err != nil {
		return "", err
	}
	want := filepath.Join(p.root, pv.Name)
	if pv.Spec.Local == nil || filepath.Clean(pv.Spec.Local.Path) != want {
		return "", fmt.Errorf("refuse to delete volume %q: its local path is not %q", pv.Name, want)
	}
	return want, nil
}

// checkClaim refuses what a directory on one host cannot give.
func checkClaim(opts controller.ProvisionOptions) error {
	if err := checkName(opts.PVName); err != nil {
		return err
	}
	if opts.PVC.Spec.Selector != nil {
		return errors.New("claims with a selector are not supported for dynamic provisioning")
	}
	if len(opts.StorageClass.Parameters) > 0 {
		return fmt.Errorf("storage class %q: parameters are not supported", opts.StorageClass.Name)
	}
	if len(opts.StorageClass.MountOptions) > 0 {
		return fmt.Errorf("storage class %q: mountOptions are not supported", opts.StorageClass.Name)
	}
	if _, ok := opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage]; !ok {
		return errors.New("the claim requests no storage")
	}
	return nil
}

// checkName holds a PV name to one path element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
		return fmt.Errorf("volume name %q cannot be a directory name", name)
	}
	return nil
}

// makeDir makes dir with dirMode whatever the umask; a directory already
// there (a retried Provision) is kept.
func makeDir(dir string) error {
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("make volume directory: %w", err)
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		return fmt.Errorf("make volume directory: %w", err)
	}
	return nil
}

// persistentVolume is the PV for opts at dir, on the node whose
// kubernetes.io/hostname label is hostname. The controller adds the claim
// reference, the class and the provisioned-by annotation.
func persistentVolume(opts controller.ProvisionOptions, dir, hostname string) *corev1.PersistentVolume {
	reclaim := corev1.PersistentVolumeReclaimDelete
	if r := opts.StorageClass.ReclaimPolicy; r != nil {
		reclaim = *r
	}
	mode := corev1.PersistentVolumeFilesystem
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: opts.PVName},
		Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   opts.PVC.Spec.AccessModes,
			VolumeMode:                    &mode,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: opts.PVC.Spec.Resources.Requests[corev1.ResourceStorage]},
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{hostname}}},
			}}}},
		},
	}
}
