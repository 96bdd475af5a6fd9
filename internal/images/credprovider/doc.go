// Package credprovider runs the node's image credential provider plugins
// (--image-credential-provider-config, --image-credential-provider-bin-dir),
// as upstream's pkg/credentialprovider/plugin does.
//
// It owns:
//   - config.go: reading the CredentialProviderConfig (a file, or a
//     directory of *.json/*.yaml/*.yml merged in lexical order), strict
//     decoding of kubelet.config.k8s.io v1, v1beta1 and v1alpha1, and
//     upstream's validation. Pure apart from the injected file functions;
//     internal/config calls it at load time.
//   - match.go: MatchImage, upstream's glob match of a matchImages entry or
//     a registry location against an image, the one place berth answers
//     that question (internal/pod/kuberuntime's keyring uses it too).
//   - cache.go: the per-plugin credential cache by cacheKeyType (Image,
//     Registry, Global) with an injected clock.
//   - exec.go: running one plugin binary with the
//     credentialprovider.kubelet.k8s.io exec API, bounded in time and
//     output.
//   - provider.go: Providers, which asks every plugin whose matchImages
//     cover an image, through the cache and one exec per image at a time.
//   - metrics.go: upstream's kubelet_credential_provider_* metrics, in the
//     registry the agent passes.
//
// upstream_test.go and match_test.go pin the constants, accepted versions,
// metric names and matchImages examples to upstream's source
// (internal/testkit/upstreamsrc).
//
// The service account token mode (tokenAttributes) is refused by name at
// load time: berth does not request tokens for plugins.
package credprovider
