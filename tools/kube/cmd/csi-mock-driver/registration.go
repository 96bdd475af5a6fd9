package main

import (
	"context"
	"fmt"
	"log"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// registration is node-driver-registrar's Registration service: it tells
// the kubelet which CSI driver this is and where its socket is. Safe for
// concurrent use (its fields are set once).
type registration struct {
	registerapi.UnimplementedRegistrationServer
	name, endpoint string
	// failed receives a failed registration; a second one is dropped.
	failed chan<- error
}

func (r *registration) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{
		Type:              registerapi.CSIPlugin,
		Name:              r.name,
		Endpoint:          r.endpoint,
		SupportedVersions: []string{"1.0.0"},
	}, nil
}

// NotifyRegistrationStatus records the kubelet's answer; a failed
// registration stops the driver, which exits 1 (node-driver-registrar
// exits so that its container restarts and registers again).
func (r *registration) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	if st.GetPluginRegistered() {
		log.Printf("csi-mock-driver: registered with the kubelet")
		return &registerapi.RegistrationStatusResponse{}, nil
	}
	err := fmt.Errorf("kubelet failed to register driver %q: %s", r.name, st.GetError())
	select {
	case r.failed <- err:
	default:
	}
	return &registerapi.RegistrationStatusResponse{}, nil
}
