// Package declaredfeatures owns the node's declared features
// (node.status.declaredFeatures, upstream's NodeDeclaredFeatures, GA and
// locked on in v1.37): which features berth declares, and the admission
// of a pod that needs one the node does not declare.
//
// Discovery and inference are k8s.io/component-helpers/nodedeclaredfeatures,
// the library upstream's kubelet, API server and scheduler share; berth
// builds its framework over the library's registry of features, as
// upstream, and never re-derives what a feature needs.
//
//	implemented.go  Implemented and Declare: the one decision of which
//	                discovered features berth really does (no in-place
//	                resize, no DRA, ...), a comment per feature
//	declared.go     New: discovery once at start (berth's resolved gates,
//	                its version, the runtime's features), discovered ∩
//	                implemented; Declared.Names for the node status
//	admit.go        Declared.Admit: upstream's DeclaredFeaturesAdmitHandler
//	                (reason PodFeatureUnsupported and its messages)
//	gates.go        Gates: component-base's gate set as the library's
//	                FeatureGate
//
// The package is pure: a Declared is fixed at start and read-only after,
// so it may be used from any goroutine.
package declaredfeatures
