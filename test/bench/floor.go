package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Floor does through the CRI, with no kubelet, what a burst asks a kubelet
// for: per pod a sandbox on the pod network and one busybox container,
// all pods at once. Its times are the floor a kubelet's overhead adds to.
type Floor struct {
	Runtime runtimeapi.RuntimeServiceClient
	// PodLogsDir is where sandboxes get their log directories.
	PodLogsDir string
}

// floorPod is what Start made for one pod.
type floorPod struct {
	name, sandboxID, containerID, logDir string
}

// Start makes the n pods of run in parallel and measures, per pod, from
// the first CRI call to StartContainer returning.
func (f *Floor) Start(ctx context.Context, run string, n int) (pods []floorPod, perPod []float64, all float64, err error) {
	pods = make([]floorPod, n)
	times := newPodTimes()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			name := run + "-" + strconv.Itoa(i)
			times.request(name, time.Now())
			pods[i], errs[i] = f.startPod(ctx, name)
			if errs[i] == nil {
				times.observe(name, time.Now())
			}
		})
	}
	wg.Wait()
	perPod, all = times.result()
	return pods, perPod, all, errors.Join(errs...)
}

func (f *Floor) startPod(ctx context.Context, name string) (floorPod, error) {
	uid := "floor-" + name
	logDir := filepath.Join(f.PodLogsDir, benchNamespace+"_"+name+"_"+uid)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return floorPod{}, fmt.Errorf("create log directory: %w", err)
	}
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: benchNamespace, Uid: uid},
		Hostname:     name,
		LogDirectory: logDir,
		Labels:       map[string]string{runLabel: name},
		Linux: &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
			NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_POD, Pid: runtimeapi.NamespaceMode_CONTAINER},
		}},
	}
	sb, err := f.Runtime.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sbCfg})
	if err != nil {
		return floorPod{}, fmt.Errorf("run pod sandbox %q: %w", name, err)
	}
	p := floorPod{name: name, sandboxID: sb.GetPodSandboxId(), logDir: logDir}
	ctr, err := f.Runtime.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: p.sandboxID, SandboxConfig: sbCfg,
		Config: &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: "c"},
			Image:    &runtimeapi.ImageSpec{Image: BusyboxImage},
			Command:  benchCommand(),
			LogPath:  "c/0.log",
		},
	})
	if err != nil {
		return p, fmt.Errorf("create container in %q: %w", name, err)
	}
	p.containerID = ctr.GetContainerId()
	if _, err := f.Runtime.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: p.containerID}); err != nil {
		return p, fmt.Errorf("start container in %q: %w", name, err)
	}
	return p, nil
}

// Delete stops and removes the pods in parallel (container with a 30 s
// grace, then the sandbox) and measures each.
func (f *Floor) Delete(ctx context.Context, pods []floorPod) (perPod []float64, all float64, err error) {
	times := newPodTimes()
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	for i, p := range pods {
		wg.Go(func() {
			times.request(p.name, time.Now())
			if errs[i] = f.deletePod(ctx, p); errs[i] == nil {
				times.observe(p.name, time.Now())
			}
		})
	}
	wg.Wait()
	perPod, all = times.result()
	return perPod, all, errors.Join(errs...)
}

func (f *Floor) deletePod(ctx context.Context, p floorPod) error {
	if p.containerID != "" {
		if _, err := f.Runtime.StopContainer(ctx, &runtimeapi.StopContainerRequest{ContainerId: p.containerID, Timeout: 30}); err != nil {
			return fmt.Errorf("stop container in %q: %w", p.name, err)
		}
	}
	if p.sandboxID == "" {
		return nil
	}
	if _, err := f.Runtime.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.sandboxID}); err != nil {
		return fmt.Errorf("stop pod sandbox %q: %w", p.name, err)
	}
	if _, err := f.Runtime.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.sandboxID}); err != nil {
		return fmt.Errorf("remove pod sandbox %q: %w", p.name, err)
	}
	return os.RemoveAll(p.logDir)
}
