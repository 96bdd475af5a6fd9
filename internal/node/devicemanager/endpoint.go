package devicemanager

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// dialTimeout bounds the connection to a registering plugin (upstream's
// dial).
const dialTimeout = 10 * time.Second

// endpoint is one registered plugin's connection. Its fields are set once
// but stopped, which Manager.mu guards. An endpoint restored from the
// checkpoint has no connection and is stopped from the start.
type endpoint struct {
	resource string
	socket   string
	conn     *grpc.ClientConn
	api      pluginapi.DevicePluginClient
	opts     *pluginapi.DevicePluginOptions
	stopped  time.Time
}

// connect dials the plugin's socket and asks its options, as upstream's
// client.Connect and PluginConnected.
func connect(ctx context.Context, resourceName, socket string) (*endpoint, error) {
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	conn, err := grpc.NewClient("passthrough:///device-plugin", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial), grpc.WithAuthority("localhost"))
	if err != nil {
		return nil, fmt.Errorf("failed to dial device plugin: %w", err)
	}
	api := pluginapi.NewDevicePluginClient(conn)
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	opts, err := api.GetDevicePluginOptions(ctx, &pluginapi.Empty{}, grpc.WaitForReady(true))
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf(msgOptionsFailed, err)
	}
	return &endpoint{resource: resourceName, socket: socket, conn: conn, api: api, opts: opts}, nil
}

func (e *endpoint) graceExpired(now time.Time) bool {
	return !e.stopped.IsZero() && now.Sub(e.stopped) > endpointStopGracePeriod
}

// errStopped is upstream's errEndpointStopped.
func (e *endpoint) errStopped() error {
	return fmt.Errorf(msgEndpointStopped, e.name())
}

func (e *endpoint) name() string { return e.resource + " at " + e.socket }

// watch streams the plugin's devices into the manager until the stream
// ends (the plugin went, or ctx ended), then disconnects it.
func (m *Manager) watch(ctx context.Context, e *endpoint) {
	logger := klog.FromContext(ctx).WithValues("resource", e.resource)
	defer m.disconnect(ctx, e)
	stream, err := e.api.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		logger.Error(err, "ListAndWatch ended unexpectedly for device plugin")
		return
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			if ctx.Err() == nil {
				logger.Error(err, "ListAndWatch ended unexpectedly for device plugin")
			}
			return
		}
		logger.V(2).Info("State pushed for device plugin", "resourceCapacity", len(resp.GetDevices()))
		m.update(ctx, e, resp.GetDevices())
	}
}

// update takes a plugin's device list (upstream's
// genericDeviceUpdateCallback) and checkpoints.
func (m *Manager) update(ctx context.Context, e *endpoint, devices []*pluginapi.Device) {
	m.mu.Lock()
	if m.connected[e.resource][e.socket] != e {
		m.mu.Unlock()
		return
	}
	healthy, unhealthy := sets.New[string](), sets.New[string]()
	all := make(map[string]*pluginapi.Device, len(devices))
	old := m.devices[e.resource]
	changed := sets.New[string]()
	for _, d := range devices {
		all[d.GetID()] = d
		if prev, ok := old[d.GetID()]; !ok || prev.GetHealth() != d.GetHealth() {
			if uid := m.pods.holder(e.resource, d.GetID()); uid != "" {
				changed.Insert(uid)
			}
		}
		if d.GetHealth() == pluginapi.Healthy {
			healthy.Insert(d.GetID())
		} else {
			unhealthy.Insert(d.GetID())
		}
	}
	m.devices[e.resource], m.healthy[e.resource], m.unhealthy[e.resource] = all, healthy, unhealthy
	_ = m.checkpointLocked(ctx) // logged
	m.mu.Unlock()
	for _, uid := range sets.List(changed) {
		select {
		case m.updates <- types.UID(uid):
		default:
			klog.FromContext(ctx).Error(nil, "Device update channel is full, discard pods info", "podUID", uid)
		}
	}
	klog.FromContext(ctx).V(2).Info("Processed device updates for resource", "resourceName", e.resource,
		"totalCount", len(devices), "healthyCount", healthy.Len())
	m.changed()
}

// disconnect closes a plugin's connection (upstream's
// PluginDisconnected): the last plugin of a resource leaves its devices
// unhealthy and its endpoint stopped, for the grace period; otherwise
// another connected plugin of the resource takes over.
func (m *Manager) disconnect(ctx context.Context, e *endpoint) {
	if e.conn != nil {
		_ = e.conn.Close()
	}
	m.mu.Lock()
	byPath := m.connected[e.resource]
	if byPath[e.socket] != e {
		m.mu.Unlock()
		return
	}
	e.stopped = m.cfg.Clock.Now()
	delete(byPath, e.socket)
	if len(byPath) == 0 {
		delete(m.connected, e.resource)
		if m.healthy[e.resource] == nil {
			m.healthy[e.resource] = sets.New[string]()
		}
		m.unhealthy[e.resource] = m.unhealthy[e.resource].Union(m.healthy[e.resource])
		m.healthy[e.resource] = sets.New[string]()
		klog.FromContext(ctx).V(2).Info("Last device plugin for this resource disconnected", "resource", e.resource)
	} else if m.endpoints[e.resource] == e {
		for _, other := range byPath {
			m.endpoints[e.resource] = other
			break
		}
	}
	m.mu.Unlock()
	m.changed()
}

// allocate is the Allocate RPC for one container's devices. The RPCs
// below are made on a running endpoint (the caller checked stopped).
func (e *endpoint) allocate(ctx context.Context, devs []string) (*pluginapi.AllocateResponse, error) {
	return e.api.Allocate(ctx, &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: devs}},
	})
}

// preStartContainer is the PreStartContainer RPC, bounded by upstream's
// timeout.
func (e *endpoint) preStartContainer(ctx context.Context, devs []string) error {
	ctx, cancel := context.WithTimeout(ctx, pluginapi.KubeletPreStartContainerRPCTimeoutInSecs*time.Second)
	defer cancel()
	_, err := e.api.PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{DevicesIds: devs})
	return err
}

// preferredAllocation is the GetPreferredAllocation RPC.
func (e *endpoint) preferredAllocation(ctx context.Context, available, mustInclude []string, size int) (sets.Set[string], error) {
	resp, err := e.api.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{
		ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs: available, MustIncludeDeviceIDs: mustInclude, AllocationSize: int32(size),
		}},
	})
	if err != nil {
		return nil, err
	}
	if rs := resp.GetContainerResponses(); len(rs) > 0 {
		return sets.New(rs[0].GetDeviceIDs()...), nil
	}
	return sets.New[string](), nil
}
