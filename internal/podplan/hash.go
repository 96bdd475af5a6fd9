package podplan

import (
	"encoding/json"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"
)

// HashContainer returns a stable hash of a container spec: FNV-64a over the
// container's JSON encoding (encoding/json: fields in struct order, map keys
// sorted, so equal specs always hash equal).
//
// It covers the whole v1.Container: name, image, command, args, env, ports,
// resources, volume mounts, probes, lifecycle hooks, security context,
// restart policy and so on. Any change to any of them changes the hash, and
// the planner restarts a running container whose recorded hash differs.
// berth does no in-place resize, so resources are covered too. The executor
// records the value in the io.kubernetes.container.hash annotation
// (runtimestate.Container.Hash) when it creates the container.
//
// As upstream's, the hash depends on the encoding of the API types: a new
// field with a non-empty default in a newer k8s.io/api changes the hash of
// every container that gets it and restarts those containers once.
func HashContainer(c *corev1.Container) uint64 {
	h := fnv.New64a()
	// A v1.Container always encodes (no channels, funcs or cyclic values);
	// on the impossible error the hash of the empty input is returned.
	b, _ := json.Marshal(c)
	_, _ = h.Write(b)
	return h.Sum64()
}
