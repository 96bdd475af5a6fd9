package csi

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/berthk8s/berth/internal/platform/pluginmanager"
)

// undoTimeout bounds the undoing of a failed registration, which runs on
// a context of its own: the registration's may be what ended.
const undoTimeout = 30 * time.Second

// Config is what a Handler is built from.
type Config struct {
	// Client writes the Node's annotation and labels and the CSINode.
	// Required: without an API server (standalone) there is nothing to
	// record a driver in, and upstream's registration fails too.
	Client kubernetes.Interface
	// NodeName is the name of the node's Node and CSINode. Required.
	NodeName string
	// Clock times the retries. Required.
	Clock clock.Clock
}

// Handler is the plugin manager's handler of CSI drivers (plugin type
// registerapi.CSIPlugin), upstream's csi.RegistrationHandler: it validates
// a driver's versions, registers it in Drivers, and records what the
// driver says about the node in the API (the CSINode, the Node's
// AnnotationNodeID and topology labels); it undoes that when the driver
// goes. InitializeCSINode creates the CSINode at start.
//
// Safe for concurrent use: the plugin manager registers different
// plugins at once, and the API writes are serialized.
type Handler struct {
	drivers *Drivers
	api     *nodeAPI
	// initMu guards initErr, why the CSINode is not initialized yet (nil
	// once it is).
	initMu  sync.Mutex
	initErr error
}

var _ pluginmanager.Handler = (*Handler)(nil)

// New builds a Handler with an empty Drivers; it starts nothing.
func New(cfg Config) (*Handler, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("CSI handler needs an API client")
	case cfg.NodeName == "":
		return nil, errors.New("CSI handler needs the node name")
	case cfg.Clock == nil:
		return nil, errors.New("CSI handler needs a clock")
	}
	return &Handler{
		drivers: &Drivers{},
		api:     &nodeAPI{client: cfg.Client, nodeName: cfg.NodeName, clock: cfg.Clock},
		initErr: errors.New(msgNotInitialized),
	}, nil
}

// Drivers returns the registry of the registered drivers, which the
// volume code reads.
func (h *Handler) Drivers() *Drivers { return h.drivers }

// ValidatePlugin accepts a driver whose advertised versions include a CSI
// 1.x version, unless a driver of the same name is registered with a
// version as high, as upstream's.
func (h *Handler) ValidatePlugin(ctx context.Context, name, endpoint string, versions []string) error {
	klog.FromContext(ctx).Info("Validating CSI driver", "driver", name, "endpoint", endpoint, "versions", strings.Join(versions, ","))
	v, err := highestVersion("ValidatePlugin", name, versions)
	if err == nil {
		existing, _ := h.drivers.Driver(name)
		err = checkExisting("ValidatePlugin", name, existing, v)
	}
	if err != nil {
		return fmt.Errorf(msgValidation, name, endpoint, err)
	}
	return nil
}

// RegisterPlugin registers a validated driver: it enters Drivers (checked
// again, since another plugin of the name may have registered since),
// NodeGetInfo is asked (within timeout, Timeout when nil), and the answer
// is recorded in the Node and the CSINode. When a step fails the driver is
// unregistered again, from Drivers and from the API, as upstream (a driver
// of the name with a lower version that it was replacing goes with it).
func (h *Handler) RegisterPlugin(ctx context.Context, name, endpoint string, versions []string, timeout *time.Duration) error {
	log := klog.FromContext(ctx).WithValues("driver", name, "endpoint", endpoint)
	log.Info("Registering CSI driver")
	v, err := highestVersion("RegisterPlugin", name, versions)
	if err != nil {
		return err
	}
	if err := h.drivers.add("RegisterPlugin", name, Driver{Endpoint: endpoint, Version: v}); err != nil {
		return err
	}
	if err := h.install(ctx, name, endpoint, timeout); err != nil {
		h.drivers.remove(name, endpoint)
		undoCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer cancel()
		if uerr := h.api.uninstall(undoCtx, name); uerr != nil {
			log.Error(uerr, "Failed to unregister CSI driver after a failed registration")
		}
		return err
	}
	log.Info("Registered CSI driver", "version", v)
	return nil
}

// install asks the driver what the node is to it and records the answer.
func (h *Handler) install(ctx context.Context, name, endpoint string, timeout *time.Duration) error {
	client, err := Dial(endpoint)
	if err != nil {
		return err
	}
	defer client.Close()
	t := Timeout
	if timeout != nil {
		t = *timeout
	}
	infoCtx, cancel := context.WithTimeout(ctx, t)
	info, err := client.NodeGetInfo(infoCtx)
	cancel()
	if err != nil {
		return fmt.Errorf("get node info from CSI driver %q: %w", name, err)
	}
	return h.api.install(ctx, name, info)
}

// DeRegisterPlugin forgets a driver whose socket went: it leaves Drivers,
// and its entry leaves the CSINode and the Node's AnnotationNodeID (the
// topology labels stay, as upstream's). A driver of the name registered
// since at another endpoint (a newer version) is left as it is, where
// upstream would drop it.
func (h *Handler) DeRegisterPlugin(ctx context.Context, name, endpoint string) {
	log := klog.FromContext(ctx).WithValues("driver", name, "endpoint", endpoint)
	log.Info("Deregistering CSI driver")
	if !h.drivers.remove(name, endpoint) {
		if drv, ok := h.drivers.Driver(name); ok {
			log.Info("Another CSI driver of the name is registered, left as it is", "registeredEndpoint", drv.Endpoint)
			return
		}
	}
	if err := h.api.uninstall(ctx, name); err != nil {
		log.Error(err, "Failed to deregister CSI driver")
	}
}
