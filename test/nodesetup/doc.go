// Package nodesetup tests hack/node-setup.sh where it is easy to get wrong
// and hard to see: starting containerd on a machine that has never run
// one. The test sources the script and runs its start_ourselves against a
// fake containerd, a fake ctr and a slow setsid on PATH, with its state
// directory and socket in a temporary directory (BERTH_NODE_STATE,
// CONTAINERD_SOCK): the real containerd is never touched, and neither
// root nor containerd is needed. The fake containerd is the test binary
// itself, run through a link named containerd (see TestMain).
package nodesetup
