// Package e2e runs berth as a process against real containerd and checks
// what a user would see: pods reaching Running, serving traffic, being
// restarted, replaced and removed, and surviving a berth restart.
//
// The tests run only when BERTH_E2E=1 (make test sets it after setting up
// containerd, CNI and the test images); otherwise they skip and say so.
// They must not run in parallel with each other: each berth owns every
// kubelet-labelled pod in containerd's k8s.io namespace.
package e2e
