// Package pluginmanager is the kubelet's plugin manager (upstream's
// pkg/kubelet/pluginmanager): it watches <root-dir>/plugins_registry for
// the registration sockets of node plugins (CSI drivers, DRA drivers,
// device plugins), asks each plugin what it is (the pluginregistration
// Registration service: GetInfo), registers it with the Handler of its
// type, tells it the outcome (NotifyRegistrationStatus), and deregisters
// it when its socket goes. Plugins do not register again when berth
// restarts: the walk at start finds their sockets.
//
//	manager.go   Config, New, Run, Snapshot, DirName
//	owner.go     Run's owner goroutine, the one writer of the desired and
//	             registered plugins: events in, operations out, results back
//	handler.go   Handler: what a plugin type's consumer implements
//	watch.go     the desired sockets: the walk at start and the fsnotify events;
//	             symlinks are never followed, names starting with "." are ignored
//	plan.go      plan(desired, registered) []op: what to register and deregister. Pure
//	queue.go     the retry policy: one operation per socket at a time, upstream's
//	             exponential back-off after a failure
//	register.go  the operations: GetInfo, the handler's ValidatePlugin and
//	             RegisterPlugin, NotifyRegistrationStatus; DeRegisterPlugin
//	socket.go    opening a socket below the directory without following a symlink,
//	             and connecting to it through that handle
//	metrics.go   plugin_manager_total_plugins
//
// A loop over the owner goroutine: an fsnotify event (or the walk) changes
// the desired sockets, plan compares them with the registered ones, the
// queue starts the operations that may start, each in its own goroutine,
// and their results come back to the owner, which records them (a failure
// backs the socket off) and plans again. The fake plugin of the tests is
// pluginfake.
package pluginmanager
