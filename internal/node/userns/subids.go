package userns

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// KubeletUser is the user whose subordinate IDs are the range pods' user
// namespaces come from (upstream kubeletUser).
const KubeletUser = "kubelet"

// ParseGetSubIDs reads the output of `getsubids kubelet` (or `-g`): one
// line "0: kubelet <first> <count>", as upstream's parseGetSubIdsOutput,
// with its messages.
func ParseGetSubIDs(out string) (Range, error) {
	lines := strings.Split(strings.Trim(out, "\n"), "\n")
	if len(lines) != 1 {
		return Range{}, fmt.Errorf("error parsing line %q: it must contain only one line", out)
	}
	parts := strings.Fields(lines[0])
	if len(parts) != 4 {
		return Range{}, fmt.Errorf("invalid line %q", out)
	}
	first, err := strconv.ParseUint(parts[2], 10, 32)
	if err != nil {
		return Range{}, fmt.Errorf("error parsing line %q: %w", out, err)
	}
	length, err := strconv.ParseUint(parts[3], 10, 32)
	if err != nil {
		return Range{}, fmt.Errorf("error parsing line %q: %w", out, err)
	}
	return Range{First: uint32(first), Length: uint32(length)}, nil
}

// maxSubIDLines bounds the lines read of /etc/subuid or /etc/subgid.
const maxSubIDLines = 100000

// ParseSubIDFile returns the ranges that a subordinate ID file
// (/etc/subuid, /etc/subgid: "<user name or UID>:<first>:<count>" per
// line, subuid(5)) gives the user with this name or numeric ID, in file
// order. Comments and blank lines are skipped; a malformed line for the
// user is an error, other users' lines are not read further.
func ParseSubIDFile(r io.Reader, name, id string) ([]Range, error) {
	var out []Range
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if n > maxSubIDLines {
			return nil, fmt.Errorf("read subordinate IDs: more than %d lines", maxSubIDLines)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		owner, rest, _ := strings.Cut(line, ":")
		if owner != name && owner != id {
			continue
		}
		first, count, ok := strings.Cut(rest, ":")
		f, err1 := strconv.ParseUint(first, 10, 32)
		c, err2 := strconv.ParseUint(count, 10, 32)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("parse subordinate IDs line %d %q: want <user>:<first>:<count>", n, line)
		}
		out = append(out, Range{First: uint32(f), Length: uint32(c)})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read subordinate IDs: %w", err)
	}
	return out, nil
}
