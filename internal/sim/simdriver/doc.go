// Package simdriver performs berth simulate's application model
// (internal/sim/appmodel) on one simulated node's in-memory runtime: a
// container exits when the model says, with the model's code, and its
// memory use follows the model (Run); the node's prober asks Probe in
// place of exec, HTTP, TCP and gRPC handlers. What berth then does about
// it (restarts, CrashLoopBackOff, a Job's completion, readiness) is the
// real pod path's.
package simdriver
