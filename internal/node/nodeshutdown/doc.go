// Package nodeshutdown owns graceful node shutdown (shutdownGracePeriod,
// shutdownGracePeriodCriticalPods, shutdownGracePeriodByPodPriority), as
// upstream's pkg/kubelet/nodeshutdown does it on Linux: berth holds a
// systemd-logind "delay" inhibitor lock for shutdown; when logind signals
// PrepareForShutdown(true) the node turns NotReady, refuses new pods and
// ends its pods group by group, lowest priority first, each within its
// budget, then releases the lock so the shutdown goes on.
//
// Files:
//   - plan.go: pure. Periods (the budgets from the configuration), Plan
//     (pods → ordered groups with grace periods) and upstream's words.
//   - logind.go: the D-Bus edge (github.com/godbus/dbus/v5): the
//     InhibitDelayMaxUSec property, Inhibit, PrepareForShutdown, and
//     systemd's KillUnit to make logind reload its configuration.
//   - manager.go: Manager.Run, the one goroutine that owns the lock and
//     the shutting-down state; pods are ended through the pod workers
//     (Config.Kill), so the decision of how a pod stops stays there.
//   - logindfake/: a fake logind on a private dbus-daemon, for tests.
//
// The agent wires it: Kill is a pod worker kill with Reason and Message
// (podstatus turns them into upstream's Failed status), ShuttingDown feeds
// the node's Ready condition ("node is shutting down") and admission
// (NotAdmittedReason). The system bus is found as godbus finds it
// (DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket).
package nodeshutdown
