package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/expansion"
	"github.com/berthk8s/berth/internal/volumes/subpath"
	"github.com/berthk8s/berth/internal/volumes/volume"
)

// mountSpec is one volumeMount resolved against the pod's volumes, before
// its subPath is checked on disk.
type mountSpec struct {
	Volume    string // the volume's name
	Index     int    // the volumeMount's position in the container's list
	VolumeDir string // the volume's host directory (or hostPath); "" for an image
	// Image is the image an image volume mounts (nil for a host
	// directory): the runtime mounts it, SubPath included.
	Image         *runtimeapi.ImageSpec
	SubPath       string // relative, "" for the whole volume
	ContainerPath string
	ReadOnly      bool
	Propagation   runtimeapi.MountPropagation
	// Relabel: the runtime relabels the mount for SELinux (the volume
	// manager's RelabeledVolumes).
	Relabel bool
}

// mountVolumes are the pod's volumes as a container mounts them.
type mountVolumes struct {
	// Dirs maps the names of the set-up volumes to their host
	// directories ("" for an image volume, which has none).
	Dirs map[string]string
	// Images maps the container's image volumes to their pulled images.
	Images map[string]*runtimeapi.ImageSpec
	// Relabel names the volumes whose mounts the runtime relabels for
	// SELinux.
	Relabel map[string]bool
}

// mountSpecs resolves a container's volumeMounts against the pod's set-up
// volumes. It is pure: subPathExpr is expanded with the container's
// environment, as upstream.
func mountSpecs(pod *corev1.Pod, c *corev1.Container, volumes mountVolumes, vars map[string]string) ([]mountSpec, error) {
	out := make([]mountSpec, 0, len(c.VolumeMounts))
	for i, vm := range c.VolumeMounts {
		dir, ok := volumes.Dirs[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume %q of volumeMount %q is not set up", vm.Name, vm.MountPath)
		}
		image := volumes.Images[vm.Name]
		if image == nil && dir == "" {
			return nil, fmt.Errorf("image of volume %q of volumeMount %q is not pulled", vm.Name, vm.MountPath)
		}
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			sub = expansion.Expand(vm.SubPathExpr, vars)
		}
		if sub != "" {
			if err := subpath.Validate(sub); err != nil {
				return nil, fmt.Errorf("check subPath %q of volume %q: %w", sub, vm.Name, err)
			}
		}
		prop, err := propagation(vm.MountPropagation, c)
		if err != nil {
			return nil, fmt.Errorf("volumeMount %q: %w", vm.MountPath, err)
		}
		readOnly := vm.ReadOnly || forcedReadOnly(pod, vm.Name)
		out = append(out, mountSpec{Volume: vm.Name, Index: i, VolumeDir: dir, Image: image, SubPath: sub,
			ContainerPath: vm.MountPath, ReadOnly: readOnly, Propagation: prop, Relabel: volumes.Relabel[vm.Name]})
	}
	return out, nil
}

// deviceSpecs resolves a container's volumeDevices against the pod's
// set-up block volumes (each a link to its device): read-write with mknod
// ("mrw"), read-only ("r") when the claim asks, as upstream's
// makeBlockVolumes.
func deviceSpecs(pod *corev1.Pod, c *corev1.Container, dirs map[string]string) ([]*runtimeapi.Device, error) {
	var out []*runtimeapi.Device
	for _, vd := range c.VolumeDevices {
		host, ok := dirs[vd.Name]
		if !ok || host == "" {
			return nil, fmt.Errorf("volume %q of volumeDevice %q is not set up", vd.Name, vd.DevicePath)
		}
		perm := "mrw"
		if forcedReadOnly(pod, vd.Name) {
			perm = "r"
		}
		out = append(out, &runtimeapi.Device{ContainerPath: vd.DevicePath, HostPath: host, Permissions: perm})
	}
	return out, nil
}

// forcedReadOnly reports whether containers mount the pod's volume name
// read-only whatever the volumeMount says (volume.ForcedReadOnly): one
// whose content berth writes, as upstream since CVE-2017-1002102, so that
// no container can plant symlinks where berth's writer works, and a claim
// the pod asks for read-only.
func forcedReadOnly(pod *corev1.Pod, name string) bool {
	for _, v := range pod.Spec.Volumes {
		if v.Name == name {
			return volume.ForcedReadOnly(v)
		}
	}
	return false
}

// propagation maps the API's mount propagation to the CRI's. Bidirectional
// is for privileged containers only, as upstream enforces.
func propagation(mode *corev1.MountPropagationMode, c *corev1.Container) (runtimeapi.MountPropagation, error) {
	if mode == nil {
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	}
	switch *mode {
	case corev1.MountPropagationNone:
		return runtimeapi.MountPropagation_PROPAGATION_PRIVATE, nil
	case corev1.MountPropagationHostToContainer:
		return runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER, nil
	case corev1.MountPropagationBidirectional:
		if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
			return 0, errors.New("Bidirectional mount propagation is available only to privileged containers")
		}
		return runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL, nil
	}
	return 0, fmt.Errorf("unknown mount propagation %q", *mode)
}

// resolveMounts turns specs into CRI mounts. A subPath is bound under the
// pod's directory by package subpath, refused when a symlink leads it out
// of its volume, its missing directories created as upstream does; the
// runtime gets the bind, never a path inside the volume, which containers
// of the pod can redirect. An image volume's subPath is the runtime's to
// resolve inside the image (ImageSubPath), as upstream.
func (m *Manager) resolveMounts(ctx context.Context, pod *corev1.Pod, c *corev1.Container, specs []mountSpec) ([]*runtimeapi.Mount, error) {
	out := make([]*runtimeapi.Mount, 0, len(specs))
	for _, s := range specs {
		if s.Image != nil {
			out = append(out, &runtimeapi.Mount{ContainerPath: s.ContainerPath, Readonly: s.ReadOnly, Propagation: s.Propagation,
				Image: s.Image, ImageSubPath: s.SubPath})
			continue
		}
		host := s.VolumeDir
		if s.SubPath != "" {
			var err error
			host, err = m.cfg.SubPaths.Bind(ctx, subpath.Request{
				PodDir: filepath.Join(m.cfg.PodsDir, string(pod.UID)), Volume: s.Volume, VolumeDir: s.VolumeDir,
				SubPath: s.SubPath, Container: c.Name, Index: s.Index,
			})
			if err != nil {
				return nil, fmt.Errorf("prepare subPath for volumeMount %q of container %q: %w", s.Volume, c.Name, err)
			}
		}
		out = append(out, &runtimeapi.Mount{
			HostPath: host, ContainerPath: s.ContainerPath, Readonly: s.ReadOnly, Propagation: s.Propagation,
			SelinuxRelabel: s.Relabel,
		})
	}
	return out, nil
}
