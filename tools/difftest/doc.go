// Package difftest holds differential tests that run upstream Kubernetes
// code itself against berth's. It is a module of its own so that berth's
// module never requires k8s.io/kubernetes; `make test` runs it (`make
// difftest`), and `make fuzz` its fuzz targets.
//
//   - expansion_test.go: berth's $(VAR) expansion against upstream's
//     third_party/forked/golang/expansion, one small package to compile.
//   - version_test.go: this module's k8s.io/kubernetes is the release
//     tools/kube/go.mod pins, the one berth follows.
//
// Where the upstream package is too heavy to compile (pkg/kubelet/server:
// some 1,400 packages), the comparison lives in berth's own package and
// reads upstream's table from its source instead (internal/testkit/upstreamsrc;
// internal/serve/server's FuzzRequestAttributesUpstream).
package difftest
