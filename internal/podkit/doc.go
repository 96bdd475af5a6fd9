// Package podkit is the wing of pure helpers that several wings share, so
// each small decision about a pod has one home and one name (STYLE rules
// 13 and 19):
//
//	podutil       predicates and facts about a pod: its source, sidecars,
//	              terminal phases, QoS class, requests, restart rules,
//	              names, log paths, UID rule
//	cgroupmath    cpu shares, CFS quotas, memory.high and the memory QoS
//	              and swap settings, for containers and cgroups alike
//	downward      what fieldRef and resourceFieldRef resolve to
//	expansion     $(VAR) expansion of commands, args, env and subPathExpr
//	sysctl        which sysctls a pod may set, and the defaults it gets
//	httpget       the GET request of an httpGet probe or hook
//	runtimestate  the snapshot types of what the runtime runs
//
// Its packages are pure: they keep no state, read no clock and perform no
// effect. They import no other wing (archtest.Wings holds it).
package podkit
