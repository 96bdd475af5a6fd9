package podsource

import (
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const fileModeErrorMsg = "must be a number between 0 and 0777 (octal), both inclusive"

// validateVolumePaths checks the paths a volume names, as upstream's
// validateVolumeSource does: the files of configMap, secret, downwardAPI and
// projected volumes (relative, no ".." element, not starting with ".."),
// their modes, and a hostPath's path (no ".." element). berth's writers and
// mounters check again; this rejects the pod when it is loaded.
func validateVolumePaths(src *corev1.VolumeSource, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case src.HostPath != nil:
		allErrs = append(allErrs, noBacksteps(src.HostPath.Path, p.Child("hostPath", "path"))...)
	case src.ConfigMap != nil:
		allErrs = append(allErrs, validateMode(src.ConfigMap.DefaultMode, p.Child("configMap", "defaultMode"))...)
		allErrs = append(allErrs, validateKeyToPaths(src.ConfigMap.Items, p.Child("configMap", "items"))...)
	case src.Secret != nil:
		allErrs = append(allErrs, validateMode(src.Secret.DefaultMode, p.Child("secret", "defaultMode"))...)
		allErrs = append(allErrs, validateKeyToPaths(src.Secret.Items, p.Child("secret", "items"))...)
	case src.DownwardAPI != nil:
		allErrs = append(allErrs, validateMode(src.DownwardAPI.DefaultMode, p.Child("downwardAPI", "defaultMode"))...)
		allErrs = append(allErrs, validateDownwardAPIFiles(src.DownwardAPI.Items, p.Child("downwardAPI", "items"))...)
	case src.Projected != nil:
		allErrs = append(allErrs, validateProjectedPaths(src.Projected, p.Child("projected"))...)
	}
	return allErrs
}

func validateProjectedPaths(proj *corev1.ProjectedVolumeSource, p *field.Path) field.ErrorList {
	allErrs := validateMode(proj.DefaultMode, p.Child("defaultMode"))
	for i, s := range proj.Sources {
		sp := p.Child("sources").Index(i)
		switch {
		case s.ConfigMap != nil:
			allErrs = append(allErrs, validateKeyToPaths(s.ConfigMap.Items, sp.Child("configMap", "items"))...)
		case s.Secret != nil:
			allErrs = append(allErrs, validateKeyToPaths(s.Secret.Items, sp.Child("secret", "items"))...)
		case s.DownwardAPI != nil:
			allErrs = append(allErrs, validateDownwardAPIFiles(s.DownwardAPI.Items, sp.Child("downwardAPI", "items"))...)
		case s.ServiceAccountToken != nil:
			allErrs = append(allErrs, localNonReservedPath(s.ServiceAccountToken.Path, sp.Child("serviceAccountToken", "path"))...)
		}
	}
	return allErrs
}

func validateKeyToPaths(items []corev1.KeyToPath, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, it := range items {
		ip := p.Index(i)
		if it.Key == "" {
			allErrs = append(allErrs, field.Required(ip.Child("key"), ""))
		}
		allErrs = append(allErrs, localNonReservedPath(it.Path, ip.Child("path"))...)
		allErrs = append(allErrs, validateMode(it.Mode, ip.Child("mode"))...)
	}
	return allErrs
}

func validateDownwardAPIFiles(items []corev1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, it := range items {
		ip := p.Index(i)
		allErrs = append(allErrs, localNonReservedPath(it.Path, ip.Child("path"))...)
		allErrs = append(allErrs, validateMode(it.Mode, ip.Child("mode"))...)
	}
	return allErrs
}

// validateSubPaths checks a mount's subPath and subPathExpr as upstream:
// relative, no ".." element, not both.
func validateSubPaths(m *corev1.VolumeMount, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m.SubPath != "" {
		allErrs = append(allErrs, localDescendingPath(m.SubPath, p.Child("subPath"))...)
	}
	if m.SubPathExpr != "" {
		if m.SubPath != "" {
			allErrs = append(allErrs, field.Invalid(p.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
		}
		allErrs = append(allErrs, localDescendingPath(m.SubPathExpr, p.Child("subPathExpr"))...)
	}
	return allErrs
}

// localNonReservedPath is upstream's ValidateLocalNonReservedPath for the
// file of a volume item, which must also be given.
func localNonReservedPath(target string, p *field.Path) field.ErrorList {
	if target == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	allErrs := localDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		allErrs = append(allErrs, field.Invalid(p, target, "must not start with '..'"))
	}
	return allErrs
}

func localDescendingPath(target string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if path.IsAbs(target) {
		allErrs = append(allErrs, field.Invalid(p, target, "must be a relative path"))
	}
	return append(allErrs, noBacksteps(target, p)...)
}

func noBacksteps(target string, p *field.Path) field.ErrorList {
	for _, elem := range strings.Split(target, "/") {
		if elem == ".." {
			return field.ErrorList{field.Invalid(p, target, "must not contain '..'")}
		}
	}
	return nil
}

func validateMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeErrorMsg)}
	}
	return nil
}
