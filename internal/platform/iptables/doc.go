// Package iptables owns the kubelet's iptables utility chains
// (makeIPTablesUtilChains), as upstream v1.37's pkg/kubelet/kubelet_network_linux.go
// keeps them for the benefit of other components: the KUBE-IPTABLES-HINT
// chain in the mangle table, whose existence tells which iptables
// (legacy or nft) the host uses, and, for IPv4 only, the KUBE-FIREWALL
// chain with its martian-packet rule (drop incoming connections to
// 127.0.0.0/8 from elsewhere), jumped to from INPUT and OUTPUT. A
// KUBE-KUBELET-CANARY chain in the mangle, nat and filter tables tells
// when something flushed the tables; the rules are then made again.
// iptablesMasqueradeBit and iptablesDropBit are validated only: upstream
// v1.37 uses neither any more.
//
//	plan.go     Step and UtilChains: the rules of one IP family, pure (pinned to upstream's source)
//	runner.go   Runner: a Step through the iptables or ip6tables binary (k8s.io/utils/exec), "-w 5", a timeout per call, never a shell
//	manager.go  Manager: Run syncs each family iptables is present for, then watches its canary
package iptables
