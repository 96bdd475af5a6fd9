package kuberuntime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/expansion"
)

// mountSpec is one volumeMount resolved against the pod's volumes, before
// its subPath is checked on disk.
type mountSpec struct {
	VolumeDir     string // the volume's host directory (or hostPath)
	SubPath       string // relative, "" for the whole volume
	ContainerPath string
	ReadOnly      bool
	Propagation   runtimeapi.MountPropagation
}

// mountSpecs resolves a container's volumeMounts against the pod's set-up
// volumes (volume name -> host directory). It is pure: subPathExpr is
// expanded with the container's environment, as upstream.
func mountSpecs(pod *corev1.Pod, c *corev1.Container, volumes map[string]string, vars map[string]string) ([]mountSpec, error) {
	if len(c.VolumeDevices) > 0 {
		return nil, errors.New("volumeDevices (block volumes) are not supported yet")
	}
	out := make([]mountSpec, 0, len(c.VolumeMounts))
	for _, vm := range c.VolumeMounts {
		dir, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("volume %q of volumeMount %q is not set up", vm.Name, vm.MountPath)
		}
		sub := vm.SubPath
		if vm.SubPathExpr != "" {
			sub = expansion.Expand(vm.SubPathExpr, vars)
		}
		if sub != "" && (filepath.IsAbs(sub) || hasDotDot(sub)) {
			return nil, fmt.Errorf("subPath %q of volume %q must be a relative path without '..'", sub, vm.Name)
		}
		prop, err := propagation(vm.MountPropagation, c)
		if err != nil {
			return nil, fmt.Errorf("volumeMount %q: %w", vm.MountPath, err)
		}
		out = append(out, mountSpec{VolumeDir: dir, SubPath: sub, ContainerPath: vm.MountPath, ReadOnly: vm.ReadOnly, Propagation: prop})
	}
	return out, nil
}

func hasDotDot(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(p), "/") {
		if part == ".." {
			return true
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

// resolveMounts turns specs into CRI mounts, checking each subPath on disk:
// it must stay inside its volume once symlinks are followed (a symlink in
// the volume pointing elsewhere is refused), and a missing subPath
// directory is created, as upstream does.
func resolveMounts(specs []mountSpec) ([]*runtimeapi.Mount, error) {
	out := make([]*runtimeapi.Mount, 0, len(specs))
	for _, s := range specs {
		host := s.VolumeDir
		if s.SubPath != "" {
			var err error
			if host, err = safeSubPath(s.VolumeDir, s.SubPath); err != nil {
				return nil, err
			}
		}
		out = append(out, &runtimeapi.Mount{
			HostPath: host, ContainerPath: s.ContainerPath, Readonly: s.ReadOnly, Propagation: s.Propagation,
		})
	}
	return out, nil
}

// safeSubPath returns root/sub with symlinks resolved, refusing a result
// outside root. The part of sub that does not exist yet is created as
// directories after the existing part has been checked, so no symlink can
// redirect the creation.
func safeSubPath(root, sub string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolve volume path %q: %w", root, err)
	}
	parts := strings.Split(filepath.Clean(sub), string(filepath.Separator))
	existing, rest := realRoot, parts
	for i := range parts {
		next := filepath.Join(existing, parts[i])
		if _, err := os.Lstat(next); err != nil {
			if os.IsNotExist(err) {
				rest = parts[i:]
				break
			}
			return "", fmt.Errorf("check subPath %q: %w", sub, err)
		}
		resolved, err := filepath.EvalSymlinks(next)
		if err != nil {
			return "", fmt.Errorf("resolve subPath %q: %w", sub, err)
		}
		if !within(realRoot, resolved) {
			return "", fmt.Errorf("subPath %q escapes its volume: it resolves to %q, outside %q", sub, resolved, realRoot)
		}
		existing, rest = resolved, parts[i+1:]
	}
	if len(rest) == 0 {
		return existing, nil
	}
	full := filepath.Join(append([]string{existing}, rest...)...)
	if err := os.MkdirAll(full, 0o755); err != nil {
		return "", fmt.Errorf("create subPath %q: %w", sub, err)
	}
	return full, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
