package agent

import (
	"context"
	"crypto/tls"
	"fmt"

	"k8s.io/component-base/logs"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/config"
	"github.com/berthk8s/berth/internal/serve/server"
)

// systemLogDir is what /logs/ serves, as upstream.
const systemLogDir = "/var/log"

// apiHandlers are the kubelet API endpoints implemented outside
// internal/serve/server, served on port 10250 and (the read-only subset) on the
// read-only port.
func (n *node) apiHandlers() server.Handlers {
	return server.Handlers{
		ContainerLogs: n.serve.streams.ContainerLogs, Exec: n.serve.streams.Exec, Attach: n.serve.streams.Attach,
		PortForward: n.serve.streams.PortForward, Run: n.serve.streams.Run,
		Stats: n.serve.observe.Stats, Metrics: n.serve.observe.Metrics, MetricsProbes: n.serve.probeMetrics,
		MetricsResource: n.serve.observe.MetricsResource,
		MetricsCadvisor: n.serve.observe.MetricsCadvisor,
	}
}

// serveAPI serves the kubelet API on address:port over TLS until ctx ends.
func (n *node) serveAPI(ctx context.Context, health server.HealthFunc, pods server.PodsFunc) error {
	kc, set := &n.cfg.Kubelet, n.set.Server
	auth, err := n.apiAuth()
	if err != nil {
		return err
	}
	handler, err := server.NewHandler(server.Config{
		Health: health, Pods: pods, RunningPods: n.pods.runtime.ListPods,
		Configz: config.ConfigzView(kc), Handlers: n.apiHandlers(), Auth: auth,
		EnableDebuggingHandlers: set.DebuggingHandlers,
		EnableSystemLogHandler:  set.SystemLogHandler,
		EnableProfilingHandler:  set.ProfilingHandler,
		EnableDebugFlagsHandler: set.DebugFlagsHandler,
		SetVerbosity:            logs.GlogSetter,
		LogDir:                  systemLogDir,
		EnableSystemLogQuery:    set.SystemLogQuery,
		Eviction:                n.evictionReport,
		Timeline:                n.pods.timeline.Get,
	})
	if err != nil {
		return err
	}
	tlsCfg, err := n.servingTLS()
	if err != nil {
		return err
	}
	return server.ServeTLS(ctx, "kubelet", kc.Address, int(kc.Port), tlsCfg, handler)
}

// servingTLS builds the TLS configuration from the serving certificate
// and client CAs of n.serve.certs, tlsMinVersion, tlsCipherSuites and
// tlsCurvePreferences (validated by config.Load).
func (n *node) servingTLS() (*tls.Config, error) {
	kc := &n.cfg.Kubelet
	minVersion, err := config.TLSVersion(kc.TLSMinVersion)
	if err != nil {
		return nil, err
	}
	suites, err := config.CipherSuites(kc.TLSCipherSuites)
	if err != nil {
		return nil, err
	}
	curves, err := config.CurvePreferences(kc.TLSCurvePreferences)
	if err != nil {
		return nil, err
	}
	return server.ServingTLS(server.TLSOptions{
		Certificate: n.serve.certs.current, ClientCAs: n.serve.certs.clientCAs,
		MinVersion: minVersion, CipherSuites: suites, CurvePreferences: curves,
	})
}

// apiAuth builds the authenticator and authorizer the configuration asks
// for. Webhook authentication and authorization use the main API client;
// config.Load has already refused them in standalone mode, as upstream.
func (n *node) apiAuth() (server.Auth, error) {
	kc := &n.cfg.Kubelet
	set := n.set.Server
	authn := server.AuthnConfig{Anonymous: set.AnonymousAuth, ClientCAs: n.serve.certs.clientCAs}
	client := n.cluster.apiClient()
	if set.WebhookAuthn {
		if client == nil {
			return server.Auth{}, fmt.Errorf("no client provided, cannot use webhook authentication")
		}
		tokens, err := server.NewWebhookTokenAuthenticator(client.AuthenticationV1().TokenReviews(),
			kc.Authentication.Webhook.CacheTTL.Duration, n.clock)
		if err != nil {
			return server.Auth{}, err
		}
		authn.Tokens = tokens
	}
	auth := server.Auth{Authn: server.NewAuthenticator(authn), Authz: server.AlwaysAllow{}, NodeName: n.cfg.NodeName}
	if kc.Authorization.Mode == kubeletconfigv1beta1.KubeletAuthorizationModeWebhook {
		if client == nil {
			return server.Auth{}, fmt.Errorf("no client provided, cannot use webhook authorization")
		}
		authz, err := server.NewWebhookAuthorizer(server.WebhookAuthzConfig{
			Reviews:         client.AuthorizationV1().SubjectAccessReviews(),
			AuthorizedTTL:   kc.Authorization.Webhook.CacheAuthorizedTTL.Duration,
			UnauthorizedTTL: kc.Authorization.Webhook.CacheUnauthorizedTTL.Duration,
			Clock:           n.clock,
		})
		if err != nil {
			return server.Auth{}, err
		}
		auth.Authz = authz
	}
	return auth, nil
}
