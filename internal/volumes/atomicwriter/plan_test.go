package atomicwriter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompute(t *testing.T) {
	base := Payload{"a": {Data: []byte("1"), Mode: 0o644}, "dir/b": {Data: []byte("2"), Mode: 0o644}}
	tests := []struct {
		name    string
		old     Payload
		next    Payload
		want    Plan
		wantErr bool
	}{
		{name: "first write", old: nil, next: base, want: Plan{Changed: true, Visible: []string{"a", "dir"}}},
		{name: "empty first write", old: nil, next: Payload{}, want: Plan{Changed: true, Visible: []string{}}},
		{name: "unchanged", old: base, next: base, want: Plan{Visible: []string{"a", "dir"}}},
		{name: "mode only is no change", old: base, next: Payload{"a": {Data: []byte("1"), Mode: 0o400}, "dir/b": {Data: []byte("2")}}, want: Plan{Visible: []string{"a", "dir"}}},
		{name: "content changed", old: base, next: Payload{"a": {Data: []byte("x")}, "dir/b": {Data: []byte("2")}}, want: Plan{Changed: true, Visible: []string{"a", "dir"}}},
		{name: "path removed", old: base, next: Payload{"a": {Data: []byte("1")}}, want: Plan{Changed: true, Visible: []string{"a"}, Remove: []string{"dir"}}},
		{name: "nested path moved keeps top", old: base, next: Payload{"a": {Data: []byte("1")}, "dir/c": {Data: []byte("2")}}, want: Plan{Changed: true, Visible: []string{"a", "dir"}}},
		{name: "absolute path", next: Payload{"/etc/x": {}}, wantErr: true},
		{name: "dot dot element", next: Payload{"a/../../x": {}}, wantErr: true},
		{name: "leading dot dot", next: Payload{"..data": {}}, wantErr: true},
		{name: "empty path", next: Payload{"": {}}, wantErr: true},
		{name: "dot slash reserved name", next: Payload{"./..data": {}}, wantErr: true},
		{name: "reserved name below dot", next: Payload{"./.././..data": {}}, wantErr: true},
		{name: "dot slash version name", next: Payload{"./..2026_11_22_20_00_00.1/x": {}}, wantErr: true},
		{name: "dot only", next: Payload{"./": {}}, wantErr: true},
		{name: "two forms of one path", next: Payload{"a": {}, "./a": {}}, wantErr: true},
		{name: "element too long", next: Payload{strings.Repeat("x", 256): {}}, wantErr: true},
		{name: "dot slash is cleaned", old: Payload{"a": {Data: []byte("1")}}, next: Payload{"./a": {Data: []byte("1")}, "b//c": {Data: []byte("2")}},
			want: Plan{Changed: true, Visible: []string{"a", "b"}}},
		{name: "dot slash same content", old: Payload{"a": {Data: []byte("1")}}, next: Payload{"./a": {Data: []byte("1")}}, want: Plan{Visible: []string{"a"}}},
		{name: "reserved name in old is never removed", old: Payload{"..data": {}, "./..data_tmp": {}, "a": {}}, next: Payload{"b": {}},
			want: Plan{Changed: true, Visible: []string{"b"}, Remove: []string{"a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Compute(tt.old, tt.next)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Compute() error = %v, wantErr %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Compute() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
