// Package config owns berth's configuration: the upstream kubelet flags berth
// accepts, the KubeletConfiguration file (and --config-dir drop-ins), berth's
// own implementation of the upstream defaults, and validation.
//
// Load is the single entry point. It reads files only through the injected
// Env, so the whole pipeline (decode, merge, default, flags, validate) is a
// pure function of its inputs and is tested by golden files in testdata/.
//
// File map:
//   - flags.go:    Flags, the upstream flag names, and their parsers.
//   - decode.go:   strict decoding of a KubeletConfiguration, --config-dir merging.
//   - defaults.go: SetDefaults, berth's copy of the upstream v1beta1 defaults.
//   - support.go:  which KubeletConfiguration fields and flags berth honours.
//   - validate.go: value validation and the generic "not supported yet" check.
//   - compatdoc.go: renders docs/config-compat.md from support.go.
//
// upstream_test.go holds the copies to upstream (internal/upstreamsrc):
// KubernetesVersion is the k8s.io/kubernetes that tools/kube pins, berth's
// staging modules are that release's, and the defaults upstream keeps as
// data (evictionHard, the root and certificate directories) are its own.
package config
