package containerlogs

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseLine(t *testing.T) {
	ts := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	tests := []struct {
		name    string
		line    string
		want    Entry
		wantErr bool
	}{
		{name: "full", line: "2026-11-22T10:00:00.123456789Z stdout F hello world\n",
			want: Entry{Time: ts, Stream: Stdout, Content: []byte("hello world\n")}},
		{name: "partial", line: "2026-11-22T10:00:00.123456789Z stderr P hel",
			want: Entry{Time: ts, Stream: Stderr, Partial: true, Content: []byte("hel")}},
		{name: "empty full line", line: "2026-11-22T10:00:00.123456789Z stdout F\n",
			want: Entry{Time: ts, Stream: Stdout, Content: []byte("\n")}},
		{name: "empty content after tag", line: "2026-11-22T10:00:00.123456789Z stdout F \n",
			want: Entry{Time: ts, Stream: Stdout, Content: []byte("\n")}},
		{name: "no tag", line: "2026-11-22T10:00:00.123456789Z stdout old format\n",
			want: Entry{Time: ts, Stream: Stdout, Content: []byte("old format\n")}},
		{name: "content keeps spaces", line: "2026-11-22T10:00:00.123456789Z stdout F  a  b \n",
			want: Entry{Time: ts, Stream: Stdout, Content: []byte(" a  b \n")}},
		{name: "bad time", line: "yesterday stdout F x\n", wantErr: true},
		{name: "bad stream", line: "2026-11-22T10:00:00Z stdin F x\n", wantErr: true},
		{name: "only time", line: "2026-11-22T10:00:00Z", wantErr: true},
		{name: "time with many fractional digits", line: "2026-11-22T10:00:00." + strings.Repeat("1", 60) + "Z stdout F x\n", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseLine([]byte(tc.line))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
				t.Errorf("entry (-want +got):\n%s", diff)
			}
		})
	}
}
