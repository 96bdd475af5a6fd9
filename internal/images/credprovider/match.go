package credprovider

import (
	"net"
	"net/url"
	"path"
	"strings"
)

// MatchImage reports whether glob, a matchImages entry or a registry
// location ("host[:port][/path]" without a scheme), covers image, a
// repository in the same form ("registry.example.com/team/app"). As
// upstream's URLsMatchStr:
//   - the ports must be equal (none matches only none);
//   - the hosts must have as many dot-separated labels, each label of image
//     matching glob's label as a glob ("*.example.com" covers
//     "a.example.com" but not "example.com" or "a.b.example.com");
//   - image's path must start with glob's path (a plain string prefix).
//
// The error is a malformed URL or glob pattern.
func MatchImage(glob, image string) (bool, error) {
	g, err := parseSchemeless(glob)
	if err != nil {
		return false, err
	}
	t, err := parseSchemeless(image)
	if err != nil {
		return false, err
	}
	gLabels, gPort := hostLabels(g)
	tLabels, tPort := hostLabels(t)
	if gPort != tPort || len(gLabels) != len(tLabels) || !strings.HasPrefix(t.Path, g.Path) {
		return false, nil
	}
	for i, label := range gLabels {
		ok, err := path.Match(label, tLabels[i])
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// parseSchemeless parses "host[:port][/path]" as an https URL, the way
// upstream parses matchImages entries and keyring locations.
func parseSchemeless(s string) (*url.URL, error) {
	return url.Parse("https://" + s)
}

// hostLabels splits u's host into its dot-separated labels and its port
// ("" when there is none or it does not parse).
func hostLabels(u *url.URL) ([]string, string) {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, ""
	}
	return strings.Split(host, "."), port
}
