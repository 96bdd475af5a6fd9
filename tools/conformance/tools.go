//go:build tools

// Package conformance pins what `make conformance` (hack/conformance.sh)
// builds from upstream Kubernetes at the release tools/kube pins:
//
//   - e2e.test: `go test -c k8s.io/kubernetes/test/e2e`. The imports below
//     are those of that package's test files (e2e_test.go), so that `go mod
//     tidy` records every module the test binary needs in go.mod and go.sum:
//     a module's tidy never follows the tests of a dependency on its own.
//   - ginkgo: the runner, at the version k8s.io/kubernetes requires.
//   - agnhost and nnp: the binaries of the agnhost and nonewprivs test images
//     (k8s.io/kubernetes/test/images/agnhost and .../nonewprivs), which
//     hack/conformance-images.sh wraps into the images the suite pulls.
//
// The build tag keeps the file out of every build; only tidy reads it.
package conformance

import (
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "go.yaml.in/yaml/v2"
	_ "k8s.io/component-base/version"
	_ "k8s.io/klog/v2"
	_ "k8s.io/kubernetes/test/conformance/testdata"
	_ "k8s.io/kubernetes/test/e2e"
	_ "k8s.io/kubernetes/test/e2e/apimachinery"
	_ "k8s.io/kubernetes/test/e2e/apps"
	_ "k8s.io/kubernetes/test/e2e/architecture"
	_ "k8s.io/kubernetes/test/e2e/auth"
	_ "k8s.io/kubernetes/test/e2e/autoscaling"
	_ "k8s.io/kubernetes/test/e2e/common"
	_ "k8s.io/kubernetes/test/e2e/dra"
	_ "k8s.io/kubernetes/test/e2e/feature"
	_ "k8s.io/kubernetes/test/e2e/framework"
	_ "k8s.io/kubernetes/test/e2e/framework/config"
	_ "k8s.io/kubernetes/test/e2e/framework/debug/init"
	_ "k8s.io/kubernetes/test/e2e/framework/metrics/init"
	_ "k8s.io/kubernetes/test/e2e/framework/node/init"
	_ "k8s.io/kubernetes/test/e2e/framework/testfiles"
	_ "k8s.io/kubernetes/test/e2e/instrumentation"
	_ "k8s.io/kubernetes/test/e2e/invariants"
	_ "k8s.io/kubernetes/test/e2e/invariants/logcheck"
	_ "k8s.io/kubernetes/test/e2e/kubectl"
	_ "k8s.io/kubernetes/test/e2e/network"
	_ "k8s.io/kubernetes/test/e2e/node"
	_ "k8s.io/kubernetes/test/e2e/scheduling"
	_ "k8s.io/kubernetes/test/e2e/storage"
	_ "k8s.io/kubernetes/test/e2e/storage/csimock"
	_ "k8s.io/kubernetes/test/e2e/storage/external"
	_ "k8s.io/kubernetes/test/e2e/testing-manifests"
	_ "k8s.io/kubernetes/test/e2e/windows"
	_ "k8s.io/kubernetes/test/fixtures"
	_ "k8s.io/kubernetes/test/images/agnhost"
	_ "k8s.io/kubernetes/test/images/nonewprivs"
	_ "k8s.io/kubernetes/test/utils/ktesting/format"
)
