package config

import (
	"crypto/x509"
	"fmt"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// validateServer checks the kubelet API server's fields: port, TLS, and
// authentication and authorization, which upstream cannot build without an
// API client (--kubeconfig) when they use the webhook.
func validateServer(kc *kubeletconfigv1beta1.KubeletConfiguration, clusterMode bool, env Env) []problem {
	var ps []problem
	if kc.Port < 1 || kc.Port > 65535 {
		ps = append(ps, fieldProblem("port", "invalid value %d: must be between 1 and 65535", kc.Port))
	}
	if _, err := TLSVersion(kc.TLSMinVersion); err != nil {
		ps = append(ps, fieldProblem("tlsMinVersion", "%v", err))
	}
	if _, err := CipherSuites(kc.TLSCipherSuites); err != nil {
		ps = append(ps, fieldProblem("tlsCipherSuites", "%v", err))
	}
	if _, err := CurvePreferences(kc.TLSCurvePreferences); err != nil {
		ps = append(ps, fieldProblem("tlsCurvePreferences", "%v", err))
	}
	if kc.ServerTLSBootstrap && !clusterMode {
		ps = append(ps, fieldProblem("serverTLSBootstrap", "true but there is no --kubeconfig: the serving certificate is requested from the API server"))
	}
	if (kc.TLSCertFile == "") != (kc.TLSPrivateKeyFile == "") {
		ps = append(ps, fieldProblem("tlsCertFile", "tlsCertFile and tlsPrivateKeyFile must be set together"))
	}
	if ca := kc.Authentication.X509.ClientCAFile; ca != "" {
		if err := checkCAFile(env, ca); err != nil {
			ps = append(ps, fieldProblem("authentication", "x509.clientCAFile: %v", err))
		}
	}
	if kc.Authentication.Webhook.Enabled != nil && *kc.Authentication.Webhook.Enabled && !clusterMode {
		ps = append(ps, fieldProblem("authentication", "webhook.enabled is true but there is no --kubeconfig: "+
			"no client provided, cannot use webhook authentication (in standalone mode set authentication.webhook.enabled: false)"))
	}
	if kc.Authentication.Webhook.CacheTTL.Duration < 0 {
		ps = append(ps, fieldProblem("authentication", "webhook.cacheTTL must not be negative"))
	}
	switch kc.Authorization.Mode {
	case kubeletconfigv1beta1.KubeletAuthorizationModeAlwaysAllow:
	case kubeletconfigv1beta1.KubeletAuthorizationModeWebhook:
		if !clusterMode {
			ps = append(ps, fieldProblem("authorization", "mode is Webhook but there is no --kubeconfig: "+
				"no client provided, cannot use webhook authorization (in standalone mode set authorization.mode: AlwaysAllow)"))
		}
	default:
		ps = append(ps, fieldProblem("authorization", "invalid mode %q: must be AlwaysAllow or Webhook", kc.Authorization.Mode))
	}
	if kc.StreamingConnectionIdleTimeout.Duration < 0 {
		ps = append(ps, fieldProblem("streamingConnectionIdleTimeout", "invalid value %q: must not be negative", kc.StreamingConnectionIdleTimeout.Duration.String()))
	}
	if kc.Authorization.Webhook.CacheAuthorizedTTL.Duration < 0 || kc.Authorization.Webhook.CacheUnauthorizedTTL.Duration < 0 {
		ps = append(ps, fieldProblem("authorization", "webhook cache TTLs must not be negative"))
	}
	return ps
}

// checkCAFile reads a PEM bundle of at least one certificate.
func checkCAFile(env Env, path string) error {
	data, err := env.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %q: %w", path, err)
	}
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("%q holds no PEM certificate", path)
	}
	return nil
}
