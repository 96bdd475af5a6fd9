package containerconfig

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/berthk8s/berth/internal/podkit/podutil"
)

// HostDNS is the node's resolver configuration, parsed from resolv.conf.
type HostDNS struct {
	Servers  []string
	Searches []string
	Options  []string
	// NoResolvConf is true when berth is configured with no resolv.conf
	// (--resolv-conf=""): pods using the host's DNS then get 127.0.0.1 and
	// the root search domain, as upstream does, which disables lookups.
	NoResolvConf bool
}

// ParseResolvConf reads nameserver, search and options lines as upstream's
// dns.parseResolvConf does: the last search line wins, trailing dots are
// dropped from search domains, a later option replaces an earlier one of the
// same name, and lines starting with # or ; are comments.
func ParseResolvConf(r io.Reader) (HostDNS, error) {
	var h HostDNS
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
		return HostDNS{}, fmt.Errorf("read resolv.conf: %w", err)
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

// DNS is the node's DNS configuration pods are given: its parsed
// resolv.conf and the kubelet's clusterDNS and clusterDomain.
type DNS struct {
	Host          HostDNS
	ClusterDNS    []string
	ClusterDomain string
}

// Event is a warning event the caller records about the pod.
type Event struct {
	Reason  string
	Message string
}

// Reasons of the DNS warning events, as upstream.
const (
	eventMissingClusterDNS = "MissingClusterDNS"
	eventDNSConfigForming  = "DNSConfigForming"
)

// dnsType is the resolver a pod starts from, before pod.Spec.DNSConfig is
// merged on top.
type dnsType int

const (
	dnsCluster dnsType = iota // cluster DNS servers and search path
	dnsHost                   // the node's resolv.conf
	dnsNone                   // nothing
)

// podDNSType maps the pod's dnsPolicy as upstream getPodDNSType does: a
// host-network pod with ClusterFirst uses the host's resolver (that is
// what ClusterFirstWithHostNet is for), and an unknown policy reads as
// ClusterFirst.
func podDNSType(pod *corev1.Pod) dnsType {
	switch pod.Spec.DNSPolicy {
	case corev1.DNSNone:
		return dnsNone
	case corev1.DNSClusterFirstWithHostNet:
		return dnsCluster
	case corev1.DNSClusterFirst:
		if pod.Spec.HostNetwork {
			return dnsHost
		}
		return dnsCluster
	case corev1.DNSDefault:
		return dnsHost
	}
	return dnsCluster
}

// podDNSConfig is the sandbox DNS config for a pod (upstream GetPodDNS).
// Cluster DNS pods get clusterDNS as their only nameservers, the search
// path <ns>.svc.<domain> svc.<domain> <domain> followed by the host's, and
// ndots:5; without clusterDNS they fall back to the host's resolver with a
// MissingClusterDNS warning. dnsPolicy None starts empty. pod.Spec.DNSConfig
// is merged on top, then the resolver limits are applied. The events are
// warnings for the caller to record.
func podDNSConfig(pod *corev1.Pod, s DNS) (*runtimeapi.DNSConfig, []Event) {
	var events []Event
	host := s.Host
	cfg := &runtimeapi.DNSConfig{
		Servers:  slices.Clone(host.Servers),
		Searches: slices.Clone(host.Searches),
		Options:  slices.Clone(host.Options),
	}
	typ := podDNSType(pod)
	if typ == dnsCluster && len(s.ClusterDNS) == 0 {
		events = append(events, Event{Reason: eventMissingClusterDNS, Message: fmt.Sprintf(
			"pod: %q. kubelet does not have ClusterDNS IP configured and cannot create Pod using %q policy. Falling back to %q policy.",
			podutil.Desc(pod), corev1.DNSClusterFirst, corev1.DNSDefault)})
		typ = dnsHost
	}
	switch typ {
	case dnsNone:
		cfg = &runtimeapi.DNSConfig{}
	case dnsCluster:
		cfg.Servers = slices.Clone(s.ClusterDNS)
		cfg.Searches = clusterSearches(pod.Namespace, s.ClusterDomain, host.Searches)
		cfg.Options = []string{"ndots:5"}
	case dnsHost:
		if host.NoResolvConf {
			cfg.Servers = []string{"127.0.0.1"}
			cfg.Searches = []string{"."}
		}
	}
	if d := pod.Spec.DNSConfig; d != nil {
		cfg.Servers = appendUnique(nil, append(cfg.Servers, d.Nameservers...)...)
		cfg.Searches = appendUnique(nil, append(cfg.Searches, d.Searches...)...)
		for _, o := range d.Options {
			opt := o.Name
			if o.Value != nil && *o.Value != "" {
				opt += ":" + *o.Value
			}
			cfg.Options = mergeOptions(cfg.Options, opt)
		}
	}
	for _, msg := range fitDNSLimits(cfg) {
		events = append(events, Event{Reason: eventDNSConfigForming, Message: msg})
	}
	return cfg, events
}

// clusterSearches is the ClusterFirst search path (upstream
// generateSearchesForDNSClusterFirst): the cluster's domains, then the
// host's, without duplicates; just the host's with no cluster domain.
func clusterSearches(namespace, clusterDomain string, hostSearches []string) []string {
	if clusterDomain == "" {
		return slices.Clone(hostSearches)
	}
	cluster := []string{namespace + ".svc." + clusterDomain, "svc." + clusterDomain, clusterDomain}
	return appendUnique(nil, append(cluster, hostSearches...)...)
}

// Resolver limits (upstream validation.MaxDNSNameservers and
// MaxDNSSearchPaths/MaxDNSSearchListChars): glibc reads at most 3
// nameservers and resolv.conf search lines are bounded. A search domain
// longer than a DNS subdomain may be (253) makes some resolvers abort.
const (
	maxDNSNameservers     = 3
	maxDNSSearchPaths     = 32
	maxDNSSearchListChars = 2048
	maxDNSSearchDomainLen = 253
)

// fitDNSLimits drops the nameservers and search domains beyond the limits,
// as upstream formDNSConfigFitsLimits does, and returns the messages of
// the DNSConfigForming events upstream records when it does.
func fitDNSLimits(cfg *runtimeapi.DNSConfig) []string {
	var msgs []string
	if len(cfg.Servers) > maxDNSNameservers {
		cfg.Servers = cfg.Servers[:maxDNSNameservers]
		msgs = append(msgs, "Nameserver limits were exceeded, some nameservers have been omitted, the applied nameserver line is: "+
			strings.Join(cfg.Servers, " "))
	}
	exceeded := false
	if len(cfg.Searches) > maxDNSSearchPaths {
		cfg.Searches, exceeded = cfg.Searches[:maxDNSSearchPaths], true
	}
	kept := cfg.Searches[:0]
	for _, s := range cfg.Searches {
		if len(s) > maxDNSSearchDomainLen {
			exceeded = true
			continue
		}
		kept = append(kept, s)
	}
	cfg.Searches = kept
	// The search line is the domains joined by spaces; domains are dropped
	// from the end until it fits.
	for len(cfg.Searches) > 0 && len(strings.Join(cfg.Searches, " ")) > maxDNSSearchListChars {
		cfg.Searches, exceeded = cfg.Searches[:len(cfg.Searches)-1], true
	}
	if exceeded {
		msgs = append(msgs, "Search Line limits were exceeded, some search paths have been omitted, the applied search line is: "+
			strings.Join(cfg.Searches, " "))
	}
	return msgs
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
