// Package crifake is an in-memory CRI runtime for tests. A Fake implements
// the CRI v1 RuntimeService and ImageService the way containerd behaves for
// everything berth's kubelet uses (sandbox and container lifecycle, status,
// lists with filters, images with sizes and pinning, ReopenContainerLog),
// keeps a log of calls, lets tests inject
// errors and change the world (a container exits, a sandbox dies, the
// network goes away), and hands out a *cri.Client over an in-process gRPC
// connection so that code under test goes through the production
// interceptors.
//
// The critest behaviour suite runs against both this fake and real
// containerd; where they differ, the fake is wrong.
//
// Files: fake.go (state), server.go (gRPC plumbing, call log, error
// injection), sandbox.go, container.go, image.go, runtime.go (Version,
// Status, RuntimeConfig, UpdateRuntimeConfig), filter.go (list filters),
// sim.go (what berth simulate turns: latencies, no call log, every image
// pullable, a pod subnet; Dial serves the fake outside tests), events.go (the GetContainerEvents stream: Unimplemented as containerd 1.6
// until EnableEvents, then every sandbox and container lifecycle step as
// containerd 2 sends it; DropEvents ends the open streams), controls.go
// (test controls and accessors).
package crifake
