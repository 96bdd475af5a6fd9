package podplan

import (
	"encoding/json"
	"hash/fnv"

	corev1 "k8s.io/api/core/v1"

	"github.com/berthk8s/berth/internal/podkit/runtimestate"
)

// HashContainer returns a stable hash of a container spec without its
// resources: FNV-64a over the container's JSON encoding (encoding/json:
// fields in struct order, map keys sorted, so equal specs always hash
// equal) with Resources left empty.
//
// It covers the rest of the v1.Container: name, image, command, args, env,
// ports, volume mounts, probes, lifecycle hooks, security context, restart
// policy and so on. Any change to any of them changes the hash, and the
// planner restarts a running container whose recorded hash differs.
// Resources are left out: they change in place (resize.go), as upstream,
// whose hash covers only the name and the image. The executor records the
// value in the io.kubernetes.container.hash annotation
// (runtimestate.Container.Hash) when it creates the container.
//
// As upstream's, the hash depends on the encoding of the API types: a new
// field with a non-empty default in a newer k8s.io/api changes the hash of
// every container that gets it and restarts those containers once.
func HashContainer(c *corev1.Container) uint64 {
	if c == nil {
		return hashJSON(nil)
	}
	bare := *c
	bare.Resources = corev1.ResourceRequirements{}
	return hashJSON(&bare)
}

// hashWithResources is the hash berth recorded before in-place resize
// (resources included). A container created then still has it; specChanged
// accepts it, so that upgrading berth restarts nothing.
func hashWithResources(c *corev1.Container) uint64 { return hashJSON(c) }

func hashJSON(c *corev1.Container) uint64 {
	h := fnv.New64a()
	// A v1.Container always encodes (no channels, funcs or cyclic values);
	// on the impossible error the hash of the empty input is returned.
	b, _ := json.Marshal(c)
	_, _ = h.Write(b)
	return h.Sum64()
}

// specChanged reports whether a running instance was created from another
// spec than spec (whose HashContainer is hash). Hash 0 means the runtime
// did not report one (no annotation): unknown, not changed.
func specChanged(c *runtimestate.Container, spec *corev1.Container, hash uint64) bool {
	return c.Hash != 0 && c.Hash != hash && c.Hash != hashWithResources(spec)
}
