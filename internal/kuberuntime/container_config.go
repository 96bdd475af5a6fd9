package kuberuntime

import (
	"fmt"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerLogPath is the container's log file relative to the pod log
// directory: <container name>/<restart count>.log.
func containerLogPath(name string, restartCount int) string {
	return filepath.Join(name, strconv.Itoa(restartCount)+".log")
}

// containerParams is everything a container config is built from.
type containerParams struct {
	Pod       *corev1.Pod
	Container *corev1.Container
	// Type is containerTypeInit or containerTypeRegular.
	Type string
	// Hash is podplan.HashContainer of the container spec.
	Hash         uint64
	RestartCount int
	// ImageRef is the image to run: the runtime's image ID when the pull
	// resolved one, else the image as the pod names it.
	ImageRef string
	// TerminationMessageHostPath is the host file mounted at the
	// container's terminationMessagePath ("" for none).
	TerminationMessageHostPath string
	// Mounts are the container's volumeMounts, resolved (resolveMounts).
	Mounts []*runtimeapi.Mount
	// Linux are the node settings of the Linux resources and security.
	Linux linuxParams
	// Env is the container's environment, resolved (resolveEnv).
	Env containerEnv
}

// buildContainerConfig builds the ContainerConfig for one container
// (upstream generateContainerConfig). It is pure; its errors are
// configuration errors (CreateContainerConfigError).
func buildContainerConfig(p containerParams) (*runtimeapi.ContainerConfig, error) {
	pod, c := p.Pod, p.Container
	security, err := containerSecurity(pod, c, p.Linux)
	if err != nil {
		return nil, err
	}
	command, args := expandCommand(c, p.Env.Vars)
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{
			Name:    c.Name,
			Attempt: uint32(p.RestartCount),
		},
		Image:       &runtimeapi.ImageSpec{Image: p.ImageRef, UserSpecifiedImage: c.Image},
		Command:     command,
		Args:        args,
		WorkingDir:  c.WorkingDir,
		Envs:        p.Env.Envs,
		Labels:      containerLabels(pod, c),
		Annotations: containerAnnotations(pod, c, p.Type, p.Hash, p.RestartCount),
		LogPath:     containerLogPath(c.Name, p.RestartCount),
		Stdin:       c.Stdin,
		StdinOnce:   c.StdinOnce,
		Tty:         c.TTY,
		Linux: &runtimeapi.LinuxContainerConfig{
			Resources:       containerResources(pod, c, p.Linux),
			SecurityContext: security,
		},
	}
	cfg.Mounts = append(cfg.Mounts, p.Mounts...)
	if p.TerminationMessageHostPath != "" && c.TerminationMessagePath != "" {
		cfg.Mounts = append(cfg.Mounts, &runtimeapi.Mount{
			HostPath:      p.TerminationMessageHostPath,
			ContainerPath: c.TerminationMessagePath,
		})
	}
	return cfg, nil
}

// findContainer returns the spec of a container or init container by name,
// with its type.
func findContainer(pod *corev1.Pod, name string) (*corev1.Container, string, error) {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i], containerTypeInit, nil
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == name {
			return &pod.Spec.Containers[i], containerTypeRegular, nil
		}
	}
	return nil, "", fmt.Errorf("find container %q: not in pod spec", name)
}
