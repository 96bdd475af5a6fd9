package dra

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/stats"
	drahealthv1 "k8s.io/kubelet/pkg/apis/dra-health/v1"
	drahealthv1alpha1 "k8s.io/kubelet/pkg/apis/dra-health/v1alpha1"
	drapb "k8s.io/kubelet/pkg/apis/dra/v1"
	drapbv1beta1 "k8s.io/kubelet/pkg/apis/dra/v1beta1"
)

// callTimeout bounds a call to a driver when its registration gives no
// timeout, upstream's defaultClientCallTimeout.
const callTimeout = 45 * time.Second

// services are the DRAPlugin gRPC services berth speaks, newest first,
// upstream's servicesSupportedByKubelet.
var services = []string{drapb.DRAPluginService, drapbv1beta1.DRAPluginService}

// chooseService picks the service berth talks to a driver that offers
// offered: the newest berth speaks, v1 over v1beta1. Upstream documents
// the same choice (validateSupportedServices: "the highest supported");
// its loop takes the first of the driver's list that it speaks, which is
// the same for drivers built on the kubeletplugin library, whose list is
// newest first.
func chooseService(offered []string) (string, error) {
	if len(offered) == 0 {
		return "", fmt.Errorf("empty list of supported gRPC services (aka supported versions)")
	}
	for _, s := range services {
		if slices.Contains(offered, s) {
			return s, nil
		}
	}
	return "", fmt.Errorf("none of services supported by the plugin (%q) are supported by the kubelet (%q)", offered, services)
}

// healthServices are the DRAResourceHealth services berth speaks, newest
// first, upstream's healthServicesSupportedByKubelet.
var healthServices = []string{drahealthv1.DRAResourceHealthService, drahealthv1alpha1.DRAResourceHealthService}

// chooseHealthService picks the health service of the driver's
// registration versions (upstream's pickHealthService: a driver lists the
// optional DRAResourceHealth service beside its DRAPlugin services, e.g.
// "v1.DRAResourceHealth"): the newest berth speaks, "" for none.
func chooseHealthService(offered []string) string {
	for _, s := range healthServices {
		if slices.Contains(offered, s) {
			return s
		}
	}
	return ""
}

// plugin is one registered endpoint of a driver: a gRPC connection and
// the service chosen for it. Safe for concurrent use; connected is
// guarded by the Drivers' mu.
type plugin struct {
	driver   string
	endpoint string
	service  string
	// health is the DRAResourceHealth service chosen, "" for none.
	health  string
	timeout time.Duration
	conn    *grpc.ClientConn
	client  drapb.DRAPluginClient
	// connected says whether the connection is up, as gRPC last told
	// (watch.go).
	connected bool
	// stopHealth ends the health stream's goroutine (nil: none runs);
	// set before the plugin is stored.
	stopHealth func()
}

// dialPlugin makes the driver's connection, which watch is told the
// ups and downs of; the caller starts it (conn.Connect).
func dialPlugin(driver, endpoint, service, health string, timeout time.Duration, watch func(*plugin) stats.Handler) (*plugin, error) {
	p := &plugin{driver: driver, endpoint: endpoint, service: service, health: health, timeout: timeout}
	addr := endpoint
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", addr)
	}
	conn, err := grpc.NewClient("passthrough:///dra", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dial), grpc.WithAuthority("localhost"), grpc.WithStatsHandler(watch(p)))
	if err != nil {
		return nil, fmt.Errorf("create gRPC connection to DRA driver %s plugin at endpoint %s: %w", driver, endpoint, err)
	}
	p.conn = conn
	switch service {
	case drapb.DRAPluginService:
		p.client = drapb.NewDRAPluginClient(conn)
	case drapbv1beta1.DRAPluginService:
		p.client = drapbv1beta1.V1Beta1ClientWrapper{DRAPluginClient: drapbv1beta1.NewDRAPluginClient(conn)}
	default:
		_ = conn.Close()
		return nil, fmt.Errorf("DRA driver %s: unsupported service %q", driver, service)
	}
	return p, nil
}

func (p *plugin) close() error { return p.conn.Close() }

// endHealth ends the plugin's health stream, if one runs.
func (p *plugin) endHealth() {
	if p.stopHealth != nil {
		p.stopHealth()
	}
}

// prepare calls NodePrepareResources within the plugin's timeout.
func (p *plugin) prepare(ctx context.Context, claims []*drapb.Claim) (*drapb.NodePrepareResourcesResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return p.client.NodePrepareResources(ctx, &drapb.NodePrepareResourcesRequest{Claims: claims})
}

// unprepare calls NodeUnprepareResources within the plugin's timeout.
func (p *plugin) unprepare(ctx context.Context, claims []*drapb.Claim) (*drapb.NodeUnprepareResourcesResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	return p.client.NodeUnprepareResources(ctx, &drapb.NodeUnprepareResourcesRequest{Claims: claims})
}

// watchResources opens the NodeWatchResources stream of the chosen health
// service (upstream's NodeWatchResources; v1alpha1 through the v1
// wrapper). It is not bounded by the call timeout: it lasts until ctx ends.
func (p *plugin) watchResources(ctx context.Context) (drahealthv1.DRAResourceHealth_NodeWatchResourcesClient, error) {
	switch p.health {
	case drahealthv1.DRAResourceHealthService:
		return drahealthv1.NewDRAResourceHealthClient(p.conn).NodeWatchResources(ctx, &drahealthv1.NodeWatchResourcesRequest{})
	case drahealthv1alpha1.DRAResourceHealthService:
		c := drahealthv1.V1Alpha1ClientWrapper{Client: drahealthv1alpha1.NewDRAResourceHealthClient(p.conn)}
		return c.NodeWatchResources(ctx, &drahealthv1.NodeWatchResourcesRequest{})
	default:
		return nil, fmt.Errorf("internal error: unsupported health service %q", p.health)
	}
}
