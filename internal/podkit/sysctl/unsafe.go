package sysctl

import (
	"fmt"
	"regexp"
	"strings"

	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// patternFmt and maxLength are upstream's valid sysctl pattern
// (pkg/apis/policy/validation SysctlContainSlashPatternFmt, core's
// SysctlMaxLength): dot- or slash-separated segments, the last of which may
// end in "*". TestPatternMatchesUpstream compares them.
const (
	segmentFmt        = "[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
	patternSegmentFmt = "([a-z0-9][-_a-z0-9]*)?[a-z0-9*]"
	patternFmt        = "(" + segmentFmt + "[\\./])*" + patternSegmentFmt
	maxLength         = 253
)

var patternRegexp = regexp.MustCompile("^" + patternFmt + "$")

// prefixMark ends the Allowlist keys that are prefixes ("kernel.msg*"):
// sysctl names never contain it.
const prefixMark = "*"

// Unsafe returns the allowlist of the kubelet's allowedUnsafeSysctls, as
// upstream's NewAllowlist builds it: each pattern is a sysctl name or a
// prefix ending in "*", and must be namespaced (a sysctl the kernel does
// not namespace would change the node for every pod). The error names the
// first pattern refused, with upstream's message.
func Unsafe(patterns []string) (Allowlist, error) {
	out := Allowlist{}
	for _, p := range patterns {
		if len(p) > maxLength || !patternRegexp.MatchString(p) {
			return nil, fmt.Errorf("sysctl %q must have at most %d characters and match regex %s", p, maxLength, patternFmt)
		}
		ns, nameOrPrefix, prefixed := utilsysctl.GetNamespace(p)
		if ns == utilsysctl.UnknownNamespace {
			return nil, fmt.Errorf("the sysctls %q are not known to be namespaced", nameOrPrefix)
		}
		if prefixed {
			nameOrPrefix += prefixMark
		}
		out[nameOrPrefix] = ns
	}
	return out, nil
}

// Union returns an allowlist that allows what a or b allows.
func (a Allowlist) Union(b Allowlist) Allowlist {
	out := make(Allowlist, len(a)+len(b))
	for k, ns := range a {
		out[k] = ns
	}
	for k, ns := range b {
		out[k] = ns
	}
	return out
}

// lookup finds the namespace of an allowed sysctl (a normalized name): its
// own entry, else a prefix entry it starts with, as upstream matches.
func (a Allowlist) lookup(name string) (utilsysctl.Namespace, bool) {
	if ns, ok := a[name]; ok {
		return ns, true
	}
	for k, ns := range a {
		if prefix, ok := strings.CutSuffix(k, prefixMark); ok && strings.HasPrefix(name, prefix) {
			return ns, true
		}
	}
	return "", false
}

// NodeAllowlist is the allowlist of a node (upstream's kubelet builds its
// sysctl admit handler from the same two): the safe sysctls its kernel
// namespaces (SafeAllowlist of its release) and its allowedUnsafeSysctls
// (Unsafe, whose error it returns).
func NodeAllowlist(kernelRelease string, allowedUnsafe []string) (Allowlist, error) {
	unsafe, err := Unsafe(allowedUnsafe)
	if err != nil {
		return nil, err
	}
	return SafeAllowlist(kernelRelease).Union(unsafe), nil
}
