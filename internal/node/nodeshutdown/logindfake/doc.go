// Package logindfake is systemd-logind, as far as berth's graceful node
// shutdown uses it, on a private dbus-daemon, for tests: Inhibit hands out
// the write end of a pipe as logind does, InhibitDelayMaxUSec is a
// property, PrepareForShutdown is emitted on demand, and systemd's
// KillUnit(systemd-logind.service, SIGHUP) makes it re-read
// InhibitDelayMaxSec from a drop-in directory. It is a test helper: its
// functions fail the test they are given.
package logindfake
