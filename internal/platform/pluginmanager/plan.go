package pluginmanager

import (
	"slices"
	"time"
)

// socketID tells one socket file from another created later at the same
// path: its inode and change time. A socket whose ID changed was
// re-created (its plugin restarted) and is registered again, as
// upstream's desired state of the world gives every creation a new UUID.
type socketID struct {
	Inode uint64
	Ctime time.Time
}

// opKind is what an operation does to the plugin at one socket.
type opKind int

const (
	// opDeregister tells the handler a registered plugin is gone.
	opDeregister opKind = iota
	// opRegister asks the plugin for its info and registers it.
	opRegister
)

func (k opKind) String() string {
	if k == opRegister {
		return "register"
	}
	return "deregister"
}

// op is one operation plan asks for: on the socket at Socket, the one
// whose ID is ID (for opRegister, the desired socket's; for opDeregister,
// the registered one's).
type op struct {
	Kind   opKind
	Socket string
	ID     socketID
}

// plan compares the desired sockets (those in the directory) with the
// registered ones, each by socket path, and returns the operations that
// make the second the first, in socket order: a registered socket no
// longer desired is deregistered; a desired one not registered is
// registered; one registered under another ID (re-created) is deregistered
// and then registered. Pure; which operations may start now (not one in
// flight for the socket, nor one backing off) is the queue's to say.
func plan(desired, registered map[string]socketID) []op {
	sockets := make([]string, 0, len(desired)+len(registered))
	for s := range desired {
		sockets = append(sockets, s)
	}
	for s := range registered {
		if _, ok := desired[s]; !ok {
			sockets = append(sockets, s)
		}
	}
	slices.Sort(sockets)
	var ops []op
	for _, s := range sockets {
		want, isDesired := desired[s]
		have, isRegistered := registered[s]
		if isRegistered && (!isDesired || have != want) {
			ops = append(ops, op{Kind: opDeregister, Socket: s, ID: have})
		}
		if isDesired && (!isRegistered || have != want) {
			ops = append(ops, op{Kind: opRegister, Socket: s, ID: want})
		}
	}
	return ops
}
