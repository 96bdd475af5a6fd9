// Command coredns is CoreDNS (github.com/coredns/coredns, the version this
// module's go.mod pins) with only the plugins berth's development cluster's
// Corefile uses, built to serve cluster DNS there (test/cluster's dns.go).
//
// Upstream's main imports core/plugin, every plugin CoreDNS ships (cloud
// DNS providers, dnstap, geoip...); this one imports the few below and
// sets the directive order to upstream's, cut to them. A Corefile naming
// any other plugin is refused at start.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
)

// directives are the plugins this build holds, in the order of upstream's
// dnsserver.Directives (a test holds both: the order and that each is
// registered).
var directives = []string{
	"bind",
	"ready",
	"health",
	"errors",
	"log",
	"loadbalance",
	"cache",
	"kubernetes",
	"loop",
	"forward",
}

func main() {
	dnsserver.Directives = directives
	coremain.Run()
}
