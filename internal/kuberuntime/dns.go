package kuberuntime

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// hostDNS is the node's resolver configuration, parsed from resolv.conf.
type hostDNS struct {
	Servers  []string
	Searches []string
	Options  []string
	// NoResolvConf is true when berth is configured with no resolv.conf
	// (--resolv-conf=""): pods using the host's DNS then get 127.0.0.1 and
	// the root search domain, as upstream does, which disables lookups.
	NoResolvConf bool
}

// parseResolvConf reads nameserver, search and options lines as upstream's
// dns.parseResolvConf does: the last search line wins, trailing dots are
// dropped from search domains, a later option replaces an earlier one of the
// same name, and lines starting with # or ; are comments.
func parseResolvConf(r io.Reader) (hostDNS, error) {
	var h hostDNS
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line != "" && (line[0] == '#' || line[0] == ';') {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "nameserver":
			if len(fields) >= 2 {
				h.Servers = append(h.Servers, fields[1])
			}
		case "search":
			h.Searches = []string{}
			for _, s := range fields[1:] {
				if s != "." {
					h.Searches = append(h.Searches, strings.TrimSuffix(s, "."))
				}
			}
		case "options":
			h.Options = mergeOptions(h.Options, fields[1:]...)
		}
	}
	if err := sc.Err(); err != nil {
		return hostDNS{}, fmt.Errorf("read resolv.conf: %w", err)
	}
	return h, nil
}

// mergeOptions appends options, an option named like an existing one
// ("ndots:5" vs "ndots:2") replacing it in place.
func mergeOptions(existing []string, opts ...string) []string {
	out := slices.Clone(existing)
	for _, o := range opts {
		name, _, _ := strings.Cut(o, ":")
		i := slices.IndexFunc(out, func(e string) bool {
			n, _, _ := strings.Cut(e, ":")
			return n == name
		})
		if i >= 0 {
			out[i] = o
		} else {
			out = append(out, o)
		}
	}
	return out
}

// podDNSConfig is the sandbox DNS config for a pod (upstream GetPodDNS):
// dnsPolicy None starts empty; every other policy uses the host's resolver,
// since berth has no cluster DNS yet (ClusterFirst falls back to Default as
// upstream does without clusterDNS). pod.Spec.DNSConfig is merged on top.
func podDNSConfig(pod *corev1.Pod, host hostDNS) *runtimeapi.DNSConfig {
	cfg := &runtimeapi.DNSConfig{}
	if pod.Spec.DNSPolicy != corev1.DNSNone {
		if host.NoResolvConf {
			cfg.Servers = []string{"127.0.0.1"}
			cfg.Searches = []string{"."}
		} else {
			cfg.Servers = slices.Clone(host.Servers)
			cfg.Searches = slices.Clone(host.Searches)
			cfg.Options = slices.Clone(host.Options)
		}
	}
	if d := pod.Spec.DNSConfig; d != nil {
		cfg.Servers = appendUnique(cfg.Servers, d.Nameservers...)
		cfg.Searches = appendUnique(cfg.Searches, d.Searches...)
		for _, o := range d.Options {
			opt := o.Name
			if o.Value != nil {
				opt += ":" + *o.Value
			}
			cfg.Options = mergeOptions(cfg.Options, opt)
		}
	}
	fitDNSLimits(cfg)
	return cfg
}

// Resolver limits (upstream validation.MaxDNSNameservers and
// MaxDNSSearchPaths/MaxDNSSearchListChars): glibc reads at most 3
// nameservers and resolv.conf search lines are bounded.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
)

// fitDNSLimits drops the nameservers and search domains beyond the limits,
// as upstream formDNSConfigFitsLimits does.
func fitDNSLimits(cfg *runtimeapi.DNSConfig) {
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
	}
	if len(cfg.Searches) > maxDNSSearchPaths {
		cfg.Searches = cfg.Searches[:maxDNSSearchPaths]
	}
	// The search line is the domains joined by spaces.
	chars := 0
	for i, s := range cfg.Searches {
		if i > 0 {
			chars++
		}
		chars += len(s)
		if chars > maxDNSSearchListChars {
			cfg.Searches = cfg.Searches[:i]
			break
		}
	}
}

// appendUnique appends the values not already present.
func appendUnique(list []string, values ...string) []string {
	for _, v := range values {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
