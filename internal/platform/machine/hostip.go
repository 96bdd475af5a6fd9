package machine

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strings"
)

// HostIPs returns the node's IPs for pod status: the configured ones, or
// the first global unicast IPv4 (then IPv6) address of the default route's
// interface, else of any interface that is up.
func HostIPs(configured []net.IP) ([]string, error) {
	if len(configured) > 0 {
		out := make([]string, 0, len(configured))
		for _, ip := range configured {
			out = append(out, ip.String())
		}
		return out, nil
	}
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil, fmt.Errorf("list interfaces: %w", err)
	}
	if name := defaultRouteInterface("/proc/net/route"); name != "" {
		for i, iface := range ifaces {
			if iface.Name == name {
				ifaces[0], ifaces[i] = ifaces[i], ifaces[0]
				break
			}
		}
	}
	var v6 string
	for _, iface := range ifaces {
		if iface.Flags&net.FlagUp == 0 || iface.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ipn.IP.To4() != nil {
				return []string{ipn.IP.String()}, nil
			}
			if v6 == "" {
				v6 = ipn.IP.String()
			}
		}
	}
	if v6 != "" {
		return []string{v6}, nil
	}
	return nil, fmt.Errorf("no global unicast address found: set --node-ip")
}

// defaultRouteInterface names the interface of the IPv4 default route, or "".
func defaultRouteInterface(routeFile string) string {
	f, err := os.Open(routeFile)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 2 && fields[1] == "00000000" && fields[0] != "Iface" {
			return fields[0]
		}
	}
	return ""
}
