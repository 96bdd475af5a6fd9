package pluginmanager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// Upstream's bounds on the registration calls
// (pluginmanager/operationexecutor): connecting to the socket, GetInfo,
// and NotifyRegistrationStatus. upstream_test.go pins them.
const (
	dialTimeout    = 10 * time.Second
	getInfoTimeout = time.Second
	notifyTimeout  = 5 * time.Second
)

// What a refused plugin is told, in upstream's words (a plugin's
// registrar logs them). upstream_test.go pins them.
const (
	msgNoHandler = "RegisterPlugin error -- no handler registered for plugin type: %s at socket %s"
	msgInvalid   = "RegisterPlugin error -- plugin validation failed with err: %v"
	msgRefused   = "RegisterPlugin error -- plugin registration failed with err: %v"
)

// registered is a registered plugin: what the snapshot shows, the ID of
// the socket it registered from, and the handler that has it.
type registered struct {
	Plugin
	id      socketID
	handler Handler
}

// result is what an operation reports to the owner goroutine: for a
// registration that succeeded, the plugin; for one that failed, why.
type result struct {
	op     op
	plugin *registered
	err    error
}

// perform performs o. A deregistration is given the plugin registered at the
// socket. It runs in its own goroutine; the queue keeps a second operation
// on the same socket from starting meanwhile.
func (m *Manager) perform(ctx context.Context, o op, reg *registered) result {
	if o.Kind == opDeregister {
		reg.handler.DeRegisterPlugin(ctx, reg.Name, reg.Endpoint)
		return result{op: o}
	}
	p, err := m.register(ctx, o.Socket, o.ID)
	if p != nil {
		p.id = o.ID
	}
	return result{op: o, plugin: p, err: err}
}

// register registers the plugin serving the Registration service at
// socket as upstream's operation generator does: GetInfo, the handler of
// the plugin's type validates and registers it, and the plugin is told the
// outcome. The endpoint is the one the plugin names, else its socket.
func (m *Manager) register(ctx context.Context, socket string, id socketID) (*registered, error) {
	sock, err := openSocket(m.dir, socket, id)
	if err != nil {
		return nil, err
	}
	defer sock.Close()
	conn, err := connect(ctx, sock)
	if err != nil {
		return nil, fmt.Errorf("connect to plugin socket %q: %w", socket, err)
	}
	defer conn.Close()
	client := registerapi.NewRegistrationClient(conn)
	infoCtx, cancel := context.WithTimeout(ctx, getInfoTimeout)
	info, err := client.GetInfo(infoCtx, &registerapi.InfoRequest{})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("get plugin info at %q: %w", socket, err)
	}
	h, ok := m.handlers[info.Type]
	if !ok {
		return nil, refuse(ctx, client, fmt.Sprintf(msgNoHandler, info.Type, socket))
	}
	p := Plugin{SocketPath: socket, Type: info.Type, Name: info.Name, Endpoint: info.Endpoint, Versions: slices.Clone(info.SupportedVersions)}
	if p.Endpoint == "" {
		p.Endpoint = socket
	}
	if err := h.ValidatePlugin(ctx, p.Name, p.Endpoint, p.Versions); err != nil {
		return nil, refuse(ctx, client, fmt.Sprintf(msgInvalid, err))
	}
	if err := h.RegisterPlugin(ctx, p.Name, p.Endpoint, p.Versions, nil); err != nil {
		return nil, refuse(ctx, client, fmt.Sprintf(msgRefused, err))
	}
	if err := notify(ctx, client, true, ""); err != nil {
		h.DeRegisterPlugin(ctx, p.Name, p.Endpoint)
		return nil, fmt.Errorf("tell plugin %q at %q it is registered: %w", p.Name, socket, err)
	}
	return &registered{Plugin: p, handler: h}, nil
}

// refuse tells the plugin it is not registered, and why; the error is the
// reason (the operation failed, and is retried).
func refuse(ctx context.Context, client registerapi.RegistrationClient, reason string) error {
	if err := notify(ctx, client, false, reason); err != nil {
		return fmt.Errorf("%s; tell the plugin: %w", reason, err)
	}
	return errors.New(reason)
}

func notify(ctx context.Context, client registerapi.RegistrationClient, registered bool, reason string) error {
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	_, err := client.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: registered, Error: reason})
	return err
}
