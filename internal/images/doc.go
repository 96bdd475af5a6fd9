// Package images is the wing of what the node knows about images beyond
// the runtime: the credential provider plugins that give pulls their
// credentials (credprovider) and the records of which credentials pulled
// which image, which decide whether a pod may use an image already on the
// node (pullrecords). Pulling itself is the pod path's (kuberuntime).
//
// It may import podkit and platform (archtest.Wings holds it).
package images
