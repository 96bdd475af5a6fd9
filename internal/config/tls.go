package config

import (
	"crypto/tls"
	"fmt"
	"strings"
)

// tlsVersions are the names upstream accepts for tlsMinVersion.
var tlsVersionNames = []struct {
	name string
	v    uint16
}{
	{"VersionTLS10", tls.VersionTLS10},
	{"VersionTLS11", tls.VersionTLS11},
	{"VersionTLS12", tls.VersionTLS12},
	{"VersionTLS13", tls.VersionTLS13},
}

// TLSVersion returns the TLS version tlsMinVersion names ("" is 0: the
// server's default, TLS 1.2).
func TLSVersion(name string) (uint16, error) {
	if name == "" {
		return 0, nil
	}
	for _, v := range tlsVersionNames {
		if v.name == name {
			return v.v, nil
		}
	}
	return 0, fmt.Errorf("unknown TLS version %q: must be VersionTLS10, VersionTLS11, VersionTLS12 or VersionTLS13", name)
}

// CipherSuites returns the IDs of the cipher suites tlsCipherSuites names:
// Go's (IANA) names of secure and insecure suites, plus the two legacy
// names upstream still accepts. Empty means Go's defaults (nil).
func CipherSuites(names []string) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	known := map[string]uint16{
		"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	}
	for _, list := range [][]*tls.CipherSuite{tls.CipherSuites(), tls.InsecureCipherSuites()} {
		for _, s := range list {
			known[s.Name] = s.ID
		}
	}
	ids := make([]uint16, 0, len(names))
	for _, n := range names {
		id, ok := known[n]
		if !ok {
			return nil, fmt.Errorf("unknown cipher suite %q", n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// CurvePreferences returns the key exchanges tlsCurvePreferences names by
// their numeric crypto/tls CurveID, refusing IDs this Go does not know.
// Empty means Go's defaults (nil).
func CurvePreferences(ids []int32) ([]tls.CurveID, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out := make([]tls.CurveID, 0, len(ids))
	for _, id := range ids {
		c := tls.CurveID(id)
		if id <= 0 || id > 0xffff || strings.HasPrefix(c.String(), "CurveID(") {
			return nil, fmt.Errorf("unknown curve ID %d", id)
		}
		out = append(out, c)
	}
	return out, nil
}
