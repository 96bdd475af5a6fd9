package csi

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// Upstream's messages (initializeCSINode); upstream_test.go pins them.
const (
	msgNotInitialized = "CSINode is not yet initialized"
	msgInitFailed     = "failed to initialize CSINode: %w"
)

// InitializeCSINode makes sure the node's CSINode exists, is owned by the
// Node, and names MigratedPlugins, as upstream's kubelet does at start
// (initializeCSINode): it waits for the API server to answer (a GET of the
// CSINode every second, until ctx ends), then initializes, retried with
// upstream's start-up back-off (initBackoff, some 140 s), each attempt
// itself retried with updateBackoff. It blocks until done.
//
// An error means the retries are spent (or ctx ended); upstream's kubelet
// exits then, to be restarted. Until it returns nil, InitError says why
// the CSINode is not initialized: upstream's node is not Ready meanwhile.
func (h *Handler) InitializeCSINode(ctx context.Context) error {
	log := klog.FromContext(ctx)
	if err := h.waitForAPIServer(ctx); err != nil {
		return fmt.Errorf("failed to initialize CSINode while waiting for API server to report ok: %w", err)
	}
	err := retry(ctx, h.api.clock, initBackoff(), "initialize CSINode", func(ctx context.Context) error {
		log.V(4).Info("Initializing migrated drivers on CSINode")
		err := h.api.initialize(ctx)
		if err != nil {
			h.setInitErr(fmt.Errorf(msgInitFailed, err))
			log.Error(err, "Failed to initialize CSINode")
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("failed to initialize CSINode after retrying: %w", err)
	}
	h.setInitErr(nil)
	return nil
}

// TryInitializeCSINode makes one attempt to initialize the node's CSINode,
// without waiting for the API server and without retries: a restarted
// node's Node exists, so it is enough there, and it lets the node's first
// status update after a restart carry Ready as it was. On failure the
// state InitError reports is left as it was (InitializeCSINode follows).
func (h *Handler) TryInitializeCSINode(ctx context.Context) error {
	if err := h.api.tryInitialize(ctx); err != nil {
		return err
	}
	h.setInitErr(nil)
	return nil
}

// InitError is why the CSINode is not initialized yet: "CSINode is not
// yet initialized" until InitializeCSINode first tries, then its last
// failure; nil once it succeeded. It is upstream's kubelet error, which
// keeps the node from being Ready.
func (h *Handler) InitError() error {
	h.initMu.Lock()
	defer h.initMu.Unlock()
	return h.initErr
}

func (h *Handler) setInitErr(err error) {
	h.initMu.Lock()
	defer h.initMu.Unlock()
	h.initErr = err
}

// waitForAPIServer GETs the CSINode (from the API server's cache) every
// apiPollInterval, the first at once, until the API server answers: the
// CSINode or its absence. That shows the API server is reachable and lets
// the node read CSINodes, which a bootstrapping node may not yet.
func (h *Handler) waitForAPIServer(ctx context.Context) error {
	opts := metav1.GetOptions{ResourceVersion: "0"}
	for {
		_, err := h.api.client.StorageV1().CSINodes().Get(ctx, h.api.nodeName, opts)
		if err == nil || apierrors.IsNotFound(err) {
			return nil
		}
		klog.FromContext(ctx).V(2).Info("Failed to contact API server when waiting for CSINode publishing", "err", err)
		t := h.api.clock.NewTimer(apiPollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: %w", context.Cause(ctx), err)
		case <-t.C():
		}
	}
}
