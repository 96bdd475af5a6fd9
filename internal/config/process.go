package config

import "k8s.io/utils/ptr"

// BlockProfiling reports whether berth records goroutine blocking events
// (runtime.SetBlockProfileRate(1)), decided as upstream's kubelet server
// does: enableContentionProfiling applies only where /debug/pprof/ is
// served, with enableServer, enableDebuggingHandlers and
// enableProfilingHandler all on.
func (c *Config) BlockProfiling() bool {
	kc := &c.Kubelet
	return kc.EnableContentionProfiling &&
		ptr.Deref(kc.EnableServer, true) &&
		ptr.Deref(kc.EnableDebuggingHandlers, true) &&
		ptr.Deref(kc.EnableProfilingHandler, true)
}
