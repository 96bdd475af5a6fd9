package atomicwriter

import (
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
