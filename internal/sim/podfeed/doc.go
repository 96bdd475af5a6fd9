// Package podfeed is berth simulate's shared pod informer
// (--pod-watch=shared): one list and watch of every pod bound to a node,
// fanned out to the simulated nodes' API pod sources by spec.nodeName, in
// place of a watch per node.
//
//	feed.go   the Feed: the reflector's store, which keeps the pods by
//	          node and queues each change for the node that subscribed;
//	          podsource.Feed's Subscribe
//	queue.go  a subscription's unbounded queue, so one slow node never
//	          holds the watch up for the others
//
// The node's side (what the events mean: adds, updates, deletes, the
// first snapshot) stays podsource's apiStore, the same as on a real node.
package podfeed
