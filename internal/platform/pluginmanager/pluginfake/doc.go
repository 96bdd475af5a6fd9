// Package pluginfake is a fake node plugin for tests: it serves the
// kubelet's plugin Registration service (GetInfo, NotifyRegistrationStatus)
// on a unix socket, answers GetInfo with the info it is given (after as
// many failures as asked for), and records the registration statuses the
// kubelet sends it.
//
//	plugin.go  Config, Start, Plugin and its call records
package pluginfake
