package pluginmanager

import (
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPlan(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 20, 0, 0, 0, time.UTC)
	a1, a2 := socketID{Inode: 1, Ctime: t0}, socketID{Inode: 1, Ctime: t0.Add(time.Second)}
	b := socketID{Inode: 2, Ctime: t0}
	// The base: two sockets, both registered as they are.
	base := func() (desired, registered map[string]socketID) {
		d := map[string]socketID{"/r/a.sock": a1, "/r/b.sock": b}
		return d, maps.Clone(d)
	}
	for _, tc := range []struct {
		name   string
		mutate func(desired, registered map[string]socketID)
		want   []op
	}{
		{name: "in step: nothing to do", mutate: func(_, _ map[string]socketID) {}},
		{name: "new socket is registered",
			mutate: func(d, _ map[string]socketID) { d["/r/c.sock"] = b },
			want:   []op{{Kind: opRegister, Socket: "/r/c.sock", ID: b}}},
		{name: "nothing registered yet (start, restart): every socket is registered",
			mutate: func(_, r map[string]socketID) { clear(r) },
			want:   []op{{Kind: opRegister, Socket: "/r/a.sock", ID: a1}, {Kind: opRegister, Socket: "/r/b.sock", ID: b}}},
		{name: "removed socket is deregistered",
			mutate: func(d, _ map[string]socketID) { delete(d, "/r/a.sock") },
			want:   []op{{Kind: opDeregister, Socket: "/r/a.sock", ID: a1}}},
		{name: "re-created socket is deregistered, then registered",
			mutate: func(d, _ map[string]socketID) { d["/r/a.sock"] = a2 },
			want:   []op{{Kind: opDeregister, Socket: "/r/a.sock", ID: a1}, {Kind: opRegister, Socket: "/r/a.sock", ID: a2}}},
		{name: "inode reused, change time differs: re-created",
			mutate: func(_, r map[string]socketID) { r["/r/a.sock"] = a2 },
			want:   []op{{Kind: opDeregister, Socket: "/r/a.sock", ID: a2}, {Kind: opRegister, Socket: "/r/a.sock", ID: a1}}},
		{name: "directory emptied: everything deregistered, in socket order",
			mutate: func(d, _ map[string]socketID) { clear(d) },
			want:   []op{{Kind: opDeregister, Socket: "/r/a.sock", ID: a1}, {Kind: opDeregister, Socket: "/r/b.sock", ID: b}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			desired, registered := base()
			tc.mutate(desired, registered)
			if diff := cmp.Diff(tc.want, plan(desired, registered)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
