package memorymanager

// The memoryManagerPolicy values, upstream's policy names.
const (
	// PolicyNone pins nothing (the default).
	PolicyNone = "None"
	// PolicyStatic gives Guaranteed pods' containers memory and huge
	// pages of their own on the smallest set of NUMA nodes that fits.
	PolicyStatic = "Static"
	// PolicyBestEffort is upstream's Windows-only policy.
	PolicyBestEffort = "BestEffort"
)
