package soak

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMarkdown(t *testing.T) {
	r := &Report{Kubelets: []string{"berth", "upstream"}}
	b := &Outcome{}
	b.add("leftovers", "", 0)
	b.add("rss growth", "%", 1.234)
	b.promise(true, "never shown")
	u := &Outcome{Err: errors.New("node not Ready")}
	u.add("leftovers", "", 3)
	u.promise(false, "%d things left", 3)
	r.set("churn", "berth", b)
	r.set("churn", "upstream", u)
	want := "### churn\n\n| figure | berth | upstream |\n|---|---|---|\n" +
		"| leftovers | 0 | 3 |\n| rss growth (%) | 1.23 | — |\n\n" +
		"- berth kept every promise\n- upstream stopped: node not Ready\n- upstream broke: 3 things left\n\n"
	if diff := cmp.Diff(want, r.Markdown()); diff != "" {
		t.Errorf("Markdown (-want +got):\n%s", diff)
	}
}

func TestParsers(t *testing.T) {
	mi := "22 1 0:21 / /var/lib/k/pods/u1/volumes/x rw - tmpfs tmpfs rw\n23 1 0:22 / /var/lib/k/podsX rw - tmpfs tmpfs rw\n24 1 0:23 / /var/lib/k/pods rw - tmpfs t rw\n"
	if got := countMountsBelow(mi, "/var/lib/k/pods"); got != 1 {
		t.Errorf("countMountsBelow = %d; want 1", got)
	}
	for name, want := range map[string]bool{
		"pod0f3c2a4e-1d2b-4c5d-9e8f-0123456789ab": true, "kubepods-besteffort-pod0f3c2a4e_1d2b.slice": true,
		"besteffort": false, "pods": false, "kubepods-besteffort.slice": false,
	} {
		if got := isPodCgroup(name); got != want {
			t.Errorf("isPodCgroup(%q) = %t; want %t", name, got, want)
		}
	}
	n, err := parseGoroutineTotal(strings.NewReader("goroutine profile: total 143\n1 @ 0x1\n"))
	if err != nil || n != 143 {
		t.Errorf("parseGoroutineTotal = %d, %v; want 143", n, err)
	}
	if _, err := parseGoroutineTotal(strings.NewReader("<html>")); err == nil {
		t.Error("parseGoroutineTotal of a page: no error")
	}
}
