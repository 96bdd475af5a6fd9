package crifake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"
)

// Fake is an in-memory CRI runtime and image service.
//
// A Fake is safe for concurrent use: every method takes mu. It starts with
// the runtime and network ready, no images (see AddImage and AllowPull), a
// stop exit code of 137, and no RuntimeConfig (Unimplemented, as
// containerd 1.6).
type Fake struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	clock clock.Clock

	// mu guards everything below: the world (sandboxes, containers,
	// images), the knobs tests turn, the call log and the injected errors.
	mu         sync.Mutex
	world      world
	knobs      knobs
	calls      []string
	injections map[string][]error
	streams    eventStreams
}

// world is the runtime's state.
type world struct {
	sandboxes  map[string]*sandbox
	containers map[string]*container
	images     map[string]*image // by image ID
	// seq numbers created objects: it orders lists and derives IDs.
	seq uint64
	// ips counts the pod IPs handed out: 10.88.0.2, 10.88.0.3, ...
	ips int
}

// knobs are the behaviours tests configure.
type knobs struct {
	runtimeReady bool
	networkReady bool
	// cgroupDriver answers RuntimeConfig; nil means Unimplemented.
	cgroupDriver *runtimeapi.CgroupDriver
	// handlers answer Status's runtime_handlers; nil reports none, as
	// containerd 1.6.
	handlers []*runtimeapi.RuntimeHandler
	// features answer Status's features; nil reports none.
	features *runtimeapi.RuntimeFeatures
	// podCIDR is the last pod CIDR UpdateRuntimeConfig set.
	podCIDR string
	// stopExitCode is the exit code StopContainer gives a running container.
	stopExitCode int32
	// pullable are the normalized refs PullImage can fetch.
	pullable map[string]bool
	// pullError, if set, is returned by PullImage for refs not pullable.
	pullError error
	// sim are the knobs of a simulated node (sim.go).
	sim simKnobs
}

// New returns an empty Fake whose timestamps come from clk.
func New(clk clock.Clock) *Fake {
	return &Fake{
		clock: clk,
		world: world{
			sandboxes:  map[string]*sandbox{},
			containers: map[string]*container{},
			images:     map[string]*image{},
		},
		knobs: knobs{
			runtimeReady: true,
			networkReady: true,
			stopExitCode: 137,
			pullable:     map[string]bool{},
		},
		injections: map[string][]error{},
	}
}

// newID returns a fresh 64-hex-digit ID, deterministic for a given
// sequence of creations. Callers hold mu.
func (f *Fake) newID(kind string) (string, uint64) {
	f.world.seq++
	sum := sha256.Sum256(fmt.Appendf(nil, "%s-%d", kind, f.world.seq))
	return hex.EncodeToString(sum[:]), f.world.seq
}

// now returns the clock's time in nanoseconds, as CRI timestamps are.
func (f *Fake) now() int64 { return f.clock.Now().UnixNano() }
