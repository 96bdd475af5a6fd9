// Package hostsetup owns what berth changes on the host for itself at
// start, as upstream's kubelet does before it runs pods:
//
//   - tunables.go: the kernel tunables upstream's setupKernelTunables
//     requires (KernelTunables, named and valued by component-helpers'
//     sysctl constants and pinned to upstream's table by a test), the pure
//     comparison (Differing) and EnsureKernelTunables: with
//     protectKernelDefaults, refuse to start while one differs, listing
//     each; without, set the differing ones, logging each failure.
//   - oom.go: ApplyOOMScoreAdj, berth's own oom_score_adj (oomScoreAdj);
//     where the kernel refuses (a negative value without
//     CAP_SYS_RESOURCE), a warning and berth runs on.
//
// Every file is read and written through an injected root or writer:
// tests use a temporary directory, never the real /proc/sys.
package hostsetup
