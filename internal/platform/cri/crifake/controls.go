package crifake

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Calls returns the names of the CRI methods called so far through a
// Client, in order ("RunPodSandbox", "CreateContainer", ...).
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// ResetCalls empties the call log.
func (f *Fake) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

// InjectError makes the next call of method (a short name such as
// "StartContainer") fail with err instead of running. Injections are
// one-shot and queue up: injecting twice fails the next two calls. The call
// is still logged. Use cri.StatusError(cri.ErrUnavailable, "...") to choose
// how the client classifies the error; a plain error arrives as Unknown.
func (f *Fake) InjectError(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.injections[method] = append(f.injections[method], err)
}

// ExitContainer simulates the death of a running container's process with
// exitCode; an empty reason becomes "Completed" for 0 and "Error" otherwise,
// as containerd reports. It fails if the container does not run.
func (f *Fake) ExitContainer(id string, exitCode int32, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.findContainer(id)
	if err != nil {
		return err
	}
	if c.state != runtimeapi.ContainerState_CONTAINER_RUNNING {
		return fmt.Errorf("exit container %q: it is %s, not running", id, c.state)
	}
	f.exit(c, exitCode, reason, "")
	return nil
}

// SetSandboxNotReady simulates a sandbox that died or lost its network: it
// becomes NOTREADY and loses its IP; its containers are left as they are.
func (f *Fake) SetSandboxNotReady(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.findSandbox(id)
	if err != nil {
		return err
	}
	s.state = runtimeapi.PodSandboxState_SANDBOX_NOTREADY
	s.ip = ""
	f.emit(s.id, s.id, runtimeapi.ContainerEventType_CONTAINER_STOPPED_EVENT)
	return nil
}

// EnableEvents makes GetContainerEvents serve the container event stream,
// as containerd >= 1.7 does; until then it answers Unimplemented, as
// containerd 1.6.
func (f *Fake) EnableEvents() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams.enabled = true
}

// DropEvents ends every open event stream with Unavailable (the events
// they held are lost) and returns how many it ended. New streams may be
// opened at once (InjectError("GetContainerEvents", ...) refuses them).
func (f *Fake) DropEvents() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(f.streams.open)
	for st := range f.streams.open {
		close(st.ended)
		delete(f.streams.open, st)
	}
	return n
}

// EventStreams returns how many event streams are open.
func (f *Fake) EventStreams() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.streams.open)
}

// AddImage makes ref present, as if it had been pulled, and returns the
// image ID.
func (f *Fake) AddImage(ref string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.addImage(ref).id
}

// SetImage sets the size and the pinned flag the image ref names reports;
// it reports whether the image is present.
func (f *Fake) SetImage(ref string, size uint64, pinned bool) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	img := f.findImage(ref)
	if img == nil {
		return false
	}
	img.size, img.pinned = size, pinned
	return true
}

// Images returns the IDs of the images present, sorted.
func (f *Fake) Images() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.world.images))
	for id := range f.world.images {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// AllowPull lets PullImage fetch the refs.
func (f *Fake) AllowPull(refs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range refs {
		f.knobs.pullable[NormalizeRef(r)] = true
	}
}

// SetPullError sets the error PullImage returns for refs not allowed; nil
// restores the default NotFound.
func (f *Fake) SetPullError(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.pullError = err
}

// SetRuntimeReady sets the RuntimeReady condition.
func (f *Fake) SetRuntimeReady(ready bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.runtimeReady = ready
}

// SetNetworkReady sets the NetworkReady condition. While the network is not
// ready, sandboxes that need a pod network cannot be created.
func (f *Fake) SetNetworkReady(ready bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.networkReady = ready
}

// SetRuntimeHandlers makes Status report the default handler ("") and
// the named ones, each declaring user namespace support as userns says.
// Without a call Status reports no handlers, as containerd 1.6.
func (f *Fake) SetRuntimeHandlers(userns bool, names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.handlers = nil
	for _, n := range append([]string{""}, names...) {
		f.knobs.handlers = append(f.knobs.handlers, &runtimeapi.RuntimeHandler{Name: n,
			Features: &runtimeapi.RuntimeHandlerFeatures{UserNamespaces: userns, RecursiveReadOnlyMounts: true}})
	}
}

// SetRuntimeFeatures makes Status report the runtime-wide features
// (nil: none, as runtimes that predate them).
func (f *Fake) SetRuntimeFeatures(features *runtimeapi.RuntimeFeatures) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.features = features
}

// SetCgroupDriver makes RuntimeConfig answer with driver ("systemd" or
// "cgroupfs"); "" makes it Unimplemented again.
func (f *Fake) SetCgroupDriver(driver string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch driver {
	case "":
		f.knobs.cgroupDriver = nil
	case "systemd":
		d := runtimeapi.CgroupDriver_SYSTEMD
		f.knobs.cgroupDriver = &d
	case "cgroupfs":
		d := runtimeapi.CgroupDriver_CGROUPFS
		f.knobs.cgroupDriver = &d
	default:
		return fmt.Errorf("set cgroup driver %q: want systemd, cgroupfs or empty", driver)
	}
	return nil
}

// SetStopExitCode sets the exit code StopContainer gives a running
// container: 137 (killed) by default, 0 for a process that handles SIGTERM.
func (f *Fake) SetStopExitCode(code int32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.knobs.stopExitCode = code
}

// Sandboxes returns the status of every sandbox, oldest first. The values
// are copies.
func (f *Fake) Sandboxes() []*runtimeapi.PodSandboxStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.PodSandboxStatus
	for _, s := range f.sortedSandboxes() {
		out = append(out, s.status())
	}
	return out
}

// Containers returns the status of every container, oldest first. The
// values are copies.
func (f *Fake) Containers() []*runtimeapi.ContainerStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.ContainerStatus
	for _, c := range f.sortedContainers() {
		out = append(out, c.status())
	}
	return out
}

// ContainerConfigs returns the config each container was created with,
// oldest first. The values are copies.
func (f *Fake) ContainerConfigs() []*runtimeapi.ContainerConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*runtimeapi.ContainerConfig
	for _, c := range f.sortedContainers() {
		out = append(out, proto.Clone(c.config).(*runtimeapi.ContainerConfig))
	}
	return out
}
