// Package critest holds the one behaviour suite of the CRI features berth
// relies on. RunSuite runs against the in-memory fake (crifake's tests) and
// against real containerd (containerd_test.go, enabled by
// BERTH_CRI_ENDPOINT): wherever they disagree, the fake is wrong.
package critest
