package cri

import (
	"context"
	"errors"
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// apiVersion is the only CRI API version berth speaks.
const apiVersion = "v1"

// Cgroup drivers as reported in Info.CgroupDriver.
const (
	CgroupDriverSystemd  = "systemd"
	CgroupDriverCgroupfs = "cgroupfs"
)

// Info describes the runtime: who it is (Verify only) and whether it is
// ready (Verify and Status).
type Info struct {
	RuntimeName       string
	RuntimeVersion    string
	RuntimeAPIVersion string
	// CgroupDriver is "systemd" or "cgroupfs", or "" when the runtime does
	// not implement RuntimeConfig (containerd 1.6).
	CgroupDriver string

	RuntimeReady bool
	// RuntimeMessage is "reason: message" of the RuntimeReady condition when
	// the runtime is not ready.
	RuntimeMessage string
	NetworkReady   bool
	// NetworkMessage is "reason: message" of the NetworkReady condition when
	// the network is not ready, e.g. "NetworkPluginNotReady: Network plugin
	// returns error: cni plugin not initialized".
	NetworkMessage string
	// Handlers are the runtime handlers the runtime reports in its Status
	// (runtime_handlers) with their features; empty when the runtime does
	// not report them (containerd 1.6), which upstream reads as "no
	// handler supports user namespaces".
	Handlers []RuntimeHandler
	// Features are the runtime-wide features of its Status (features),
	// all false when it reports none.
	Features RuntimeFeatures
}

// RuntimeFeatures are the runtime-wide features the runtime declares in
// its Status, those berth reads (the node's declared features).
type RuntimeFeatures struct {
	// UserNamespacesHostNetwork: pods in a user namespace may use the
	// host's network.
	UserNamespacesHostNetwork bool
	// MountOptions: bind mounts take additional mount options.
	MountOptions bool
}

// RuntimeHandler is one runtime handler of the runtime's Status and the
// features it declares. Name "" is the default handler.
type RuntimeHandler struct {
	Name                    string
	UserNamespaces          bool
	RecursiveReadOnlyMounts bool
}

// Verify checks the runtime at startup: it must speak CRI v1 (Version), it
// reports its readiness (Status), and its cgroup driver (RuntimeConfig, when
// implemented). A runtime that answers but is not ready is no error: the
// readiness is in Info, for the node status.
func (c *Client) Verify(ctx context.Context) (Info, error) {
	v, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{Version: apiVersion})
	if err != nil {
		return Info{}, fmt.Errorf("get runtime version: %w", err)
	}
	if err := checkVersion(v); err != nil {
		return Info{}, err
	}
	info, err := c.Status(ctx)
	if err != nil {
		return Info{}, err
	}
	info.RuntimeName = v.GetRuntimeName()
	info.RuntimeVersion = v.GetRuntimeVersion()
	info.RuntimeAPIVersion = v.GetRuntimeApiVersion()

	rc, err := c.Runtime.RuntimeConfig(ctx, &runtimeapi.RuntimeConfigRequest{})
	switch {
	case errors.Is(err, ErrUnimplemented):
		// Older runtimes do not say; the configured driver stands.
	case err != nil:
		return Info{}, fmt.Errorf("get runtime config: %w", err)
	default:
		info.CgroupDriver = cgroupDriver(rc)
	}
	return info, nil
}

// Status reports the runtime's readiness conditions, for periodic health
// checks. Only the readiness fields of Info are set.
func (c *Client) Status(ctx context.Context) (Info, error) {
	resp, err := c.Runtime.Status(ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		return Info{}, fmt.Errorf("get runtime status: %w", err)
	}
	if resp.GetStatus() == nil {
		return Info{}, fmt.Errorf("get runtime status: runtime returned no status")
	}
	var info Info
	info.RuntimeReady, info.RuntimeMessage = condition(resp.GetStatus(), runtimeapi.RuntimeReady)
	info.NetworkReady, info.NetworkMessage = condition(resp.GetStatus(), runtimeapi.NetworkReady)
	info.Features = RuntimeFeatures{
		UserNamespacesHostNetwork: resp.GetFeatures().GetUserNamespacesHostNetwork(),
		MountOptions:              resp.GetFeatures().GetMountOptions(),
	}
	for _, h := range resp.GetRuntimeHandlers() {
		info.Handlers = append(info.Handlers, RuntimeHandler{
			Name:                    h.GetName(),
			UserNamespaces:          h.GetFeatures().GetUserNamespaces(),
			RecursiveReadOnlyMounts: h.GetFeatures().GetRecursiveReadOnlyMounts(),
		})
	}
	return info, nil
}

// checkVersion accepts a Version answer only if it is complete and for CRI
// v1.
func checkVersion(v *runtimeapi.VersionResponse) error {
	var missing []string
	if v.GetRuntimeName() == "" {
		missing = append(missing, "RuntimeName")
	}
	if v.GetRuntimeVersion() == "" {
		missing = append(missing, "RuntimeVersion")
	}
	if v.GetRuntimeApiVersion() == "" {
		missing = append(missing, "RuntimeApiVersion")
	}
	if len(missing) > 0 {
		return fmt.Errorf("check runtime version: answer lacks %s", strings.Join(missing, ", "))
	}
	if got := v.GetRuntimeApiVersion(); got != apiVersion && !strings.HasPrefix(got, apiVersion+".") {
		return fmt.Errorf("check runtime version: runtime %s %s speaks CRI %q, berth needs %q",
			v.GetRuntimeName(), v.GetRuntimeVersion(), got, apiVersion)
	}
	return nil
}

// condition returns whether the named condition is true, and when it is not
// a "reason: message" explanation. A missing condition counts as not ready.
func condition(st *runtimeapi.RuntimeStatus, name string) (bool, string) {
	for _, c := range st.GetConditions() {
		if c.GetType() != name {
			continue
		}
		if c.GetStatus() {
			return true, ""
		}
		if c.GetReason() == "" || c.GetMessage() == "" {
			return false, c.GetReason() + c.GetMessage()
		}
		return false, c.GetReason() + ": " + c.GetMessage()
	}
	return false, name + " condition not reported"
}

func cgroupDriver(rc *runtimeapi.RuntimeConfigResponse) string {
	if rc.GetLinux() == nil {
		return ""
	}
	switch rc.GetLinux().GetCgroupDriver() {
	case runtimeapi.CgroupDriver_SYSTEMD:
		return CgroupDriverSystemd
	case runtimeapi.CgroupDriver_CGROUPFS:
		return CgroupDriverCgroupfs
	}
	return ""
}
