package logquery

import (
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func aggregate(errs field.ErrorList) string {
	if len(errs) == 0 {
		return ""
	}
	return errs.ToAggregate().Error()
}

func TestParse(t *testing.T) {
	since := time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC)
	tests := []struct {
		name    string
		query   string
		want    *Query
		wantErr string
	}{
		{name: "no parameters: a plain file request", query: ""},
		{name: "a service", query: "query=kubelet", want: &Query{Services: []string{"kubelet"}}},
		{name: "a file has a slash", query: "query=/syslog", want: &Query{Files: []string{"/syslog"}}},
		{name: "a file with a backslash", query: `query=dir\x.log`, want: &Query{Files: []string{`dir\x.log`}}},
		{name: "blank queries are dropped", query: "query=kubelet&query=%20", want: &Query{Services: []string{"kubelet"}}},
		{name: "only blank", query: "query=%20%20", wantErr: `query: Invalid value: ["  "]: may not be empty`},
		{name: "options", query: "query=kubelet&sinceTime=2026-11-24T01:02:03Z&tailLines=10&boot=-1&pattern=err.*",
			want: &Query{Services: []string{"kubelet"}, Options: Options{SinceTime: &since, TailLines: ptr.To(10), Boot: ptr.To(-1), Pattern: "err.*"}}},
		{name: "options alone", query: "tailLines=5", want: &Query{Options: Options{TailLines: ptr.To(5)}}},
		{name: "bad time", query: "query=kubelet&untilTime=yesterday", wantErr: `untilTime: Invalid value: "yesterday": invalid time format`},
		{name: "bad number", query: "query=kubelet&tailLines=ten", wantErr: `tailLines: Invalid value: "ten": strconv.Atoi: parsing "ten": invalid syntax`},
		{name: "bad boot", query: "query=kubelet&boot=x", wantErr: `boot: Invalid value: "x": strconv.Atoi: parsing "x": invalid syntax`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, errs := Parse(values)
			if diff := cmp.Diff(tt.wantErr, aggregate(errs)); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("query (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/syslog", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	since, until := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	svc := func(s ...string) Query { return Query{Services: s} }
	tests := []struct {
		name string
		q    Query
		want string
	}{
		{name: "a service", q: svc("kubelet")},
		{name: "unit names with @ : . -", q: svc("getty@tty1", "systemd-journald.service", "a:b", "x_y")},
		{name: "unsafe characters", q: svc("kubelet;rm"), want: `query: Invalid value: "kubelet;rm": input contains unsupported characters`},
		{name: "an option-looking name", q: svc("--help"), want: ""},
		{name: "too long", q: svc(strings.Repeat("a", 257)), want: `query: Invalid value: "` + strings.Repeat("a", 257) + `": length must be less than 256`},
		{name: "too many", q: svc("a", "b", "c", "d", "e"), want: `query: Too many: 5: must have at most 4 items`},
		{name: "options without a query", q: Query{Options: Options{TailLines: ptr.To(1)}}, want: `query: Required value: cannot be empty with options`},
		{name: "file and service", q: Query{Files: []string{"/syslog"}, Services: []string{"kubelet"}},
			want: `query: Invalid value: "[/syslog], [kubelet]": cannot specify a file and service`},
		{name: "two files", q: Query{Files: []string{"/a", "/b"}}, want: `query: Invalid value: ["/a","/b"]: cannot specify more than one file`},
		{name: "file with options", q: Query{Files: []string{"/syslog"}, Options: Options{Pattern: "x"}},
			want: `query: Invalid value: ["/syslog"]: cannot specify file with options`},
		{name: "a file that exists", q: Query{Files: []string{"syslog"}}},
		{name: "a file outside the directory", q: Query{Files: []string{"../etc/passwd"}},
			want: `query: Invalid value: ["../etc/passwd"]: statat ../etc/passwd: path escapes from parent`},
		{name: "until before since", q: Query{Services: []string{"k"}, Options: Options{SinceTime: &since, UntilTime: &until}},
			want: "untilTime: Invalid value: \"2026-01-01T00:00:00Z\": must be after `sinceTime`"},
		{name: "a later boot", q: Query{Services: []string{"k"}, Options: Options{Boot: ptr.To(1)}}, want: `boot: Invalid value: 1: must be less than 1`},
		{name: "tailLines too many", q: Query{Services: []string{"k"}, Options: Options{TailLines: ptr.To(100001)}},
			want: `tailLines: Invalid value: 100001: must be between 0 and 100000, inclusive`},
		{name: "tailLines negative", q: Query{Services: []string{"k"}, Options: Options{TailLines: ptr.To(-1)}},
			want: `tailLines: Invalid value: -1: must be between 0 and 100000, inclusive`},
		{name: "bad pattern", q: Query{Services: []string{"k"}, Options: Options{Pattern: "(x"}},
			want: `pattern: Invalid value: "(x": error parsing regexp: missing closing ): ` + "`(x`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, aggregate(Validate(&tt.q, root.Stat))); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJournalArgs(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name     string
		q        Query
		services []string
		want     []string
	}{
		{name: "a service", services: []string{"kubelet"},
			want: []string{"--utc", "--no-pager", "--output=short-precise", "--unit=kubelet"}},
		{name: "every option", q: Query{Options: Options{SinceTime: &at, UntilTime: &at, TailLines: ptr.To(7), Boot: ptr.To(-2), Pattern: "a b;c"}},
			services: []string{"kubelet", "containerd"},
			want: []string{"--utc", "--no-pager", "--output=short-precise", "--since=2026-3-4 05:6:7", "--until=2026-3-4 05:6:7",
				"--pager-end", "--lines=7", "--unit=kubelet", "--unit=containerd", "--grep=a b;c", "--boot", "-2"}},
		{name: "a service that looks like an option stays a unit", services: []string{"--help"},
			want: []string{"--utc", "--no-pager", "--output=short-precise", "--unit=--help"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, JournalArgs(&tt.q, tt.services)); diff != "" {
				t.Errorf("JournalArgs (-want +got):\n%s", diff)
			}
		})
	}
}
