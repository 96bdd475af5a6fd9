// Package upstreamsrc is test support: it lets a test read the upstream
// Kubernetes source that berth copies tables from (safe sysctls, masked
// paths, default thresholds, reasons), so that the copy is pinned by a
// test instead of by hand (STYLE.md rule 14).
//
// The source is the module cache's copy of k8s.io/kubernetes (and of its
// staging modules) at the versions tools/kube/go.mod pins: one place says
// which upstream berth follows, and `make cluster-tools`, which `make test`
// runs first, downloads it. When a module is missing, a test fails in CI
// (CI=true or BERTH_E2E=1) and is skipped elsewhere, each time with the
// command that fetches it.
//
//	source.go  Source: locating modules (ModuleDir, Version, and berth's
//	           own BerthVersion), parsing a package's Linux files (Files),
//	           finding declarations (Value, Func)
//	expr.go    Node: reading values out of the syntax tree: strings,
//	           integers and floats, lists and maps of them, keyed struct
//	           fields, constants across packages, calls and their arguments
//
// Only _test.go files import this package.
package upstreamsrc
