// Package sdnotify tells systemd how berth is doing, through the
// sd_notify(3) protocol of github.com/coreos/go-systemd/v22/daemon: READY=1
// once berth serves (Notifier.Ready), and WATCHDOG=1 every half of
// WATCHDOG_USEC while berth's own health check passes (Notifier.Run), as
// upstream's pkg/kubelet/watchdog. Without NOTIFY_SOCKET every send is a
// no-op; without WATCHDOG_USEC Run only waits for its context.
package sdnotify
