package volume

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// fcPlugin is the plugin directory of fibre channel volumes below
// PodsDir/<uid>/volumes and volumeDevices, as upstream's fc plugin.
const fcPlugin = "kubernetes.io~fc"

// FCHost is where the volume manager finds the host's fibre channel disks:
// its /dev (disk/by-path, disk/by-id) and its /sys (scsi_host rescans,
// multipath slaves, SCSI device deletion). The zero value is the host's
// own; tests point it at trees of their own.
type FCHost struct {
	Dev, Sys string
}

func (h FCHost) dev() string { return cmp.Or(h.Dev, "/dev") }
func (h FCHost) sys() string { return cmp.Or(h.Sys, "/sys") }

// fcDisk names a fibre channel disk as its volume source does: target
// world wide names and a LUN, or WWIDs (spaces as underscores, as udev
// names them under /dev/disk/by-id).
type fcDisk struct {
	wwns  []string
	lun   string
	wwids []string
}

// Upstream's words (pkg/volume/fc), pinned by upstream_test.go.
const (
	msgFCNoDiskInfo = "fc: no fc disk information found. failed to make a new mounter"
	msgFCNoDisk     = "no fc disk found"
)

// wwnPattern is a world wide name as the by-path links spell it after
// "-fc-0x": hexadecimal digits.
var wwnPattern = regexp.MustCompile(`^[0-9a-fA-F]+$`)

// fcDiskOf reads a volume's fibre channel source as upstream's
// volumeSpecToMounter: target WWNs with a LUN, else WWIDs, else an error.
// berth checks what upstream takes as it is, since both end up in a path
// (and the WWN in a pattern): a WWN must be hexadecimal, a WWID one path
// element.
func fcDiskOf(targetWWNs []string, lun *int32, wwids []string) (fcDisk, error) {
	switch {
	case len(targetWWNs) != 0 && lun != nil:
		for _, w := range targetWWNs {
			if !wwnPattern.MatchString(w) {
				return fcDisk{}, fmt.Errorf("fc: target WWN %q is not a hexadecimal world wide name", w)
			}
		}
		return fcDisk{wwns: targetWWNs, lun: strconv.Itoa(int(*lun))}, nil
	case len(wwids) != 0:
		d := fcDisk{}
		for _, w := range wwids {
			w = strings.ReplaceAll(w, " ", "_")
			if w == "" || w == "." || w == ".." || strings.ContainsAny(w, "/\x00") {
				return fcDisk{}, fmt.Errorf("fc: WWID %q cannot name a disk", w)
			}
			d.wwids = append(d.wwids, w)
		}
		return d, nil
	}
	return fcDisk{}, errors.New(msgFCNoDiskInfo)
}

// globalName is the disk's directory below
// PluginsDir/kubernetes.io/fc, as upstream's makePDNameInternal:
// "<wwn>-<wwn>-lun-<lun>", or "<wwid>-<wwid>".
func (d fcDisk) globalName() string {
	if len(d.wwns) != 0 {
		return strings.Join(d.wwns, "-") + "-lun-" + d.lun
	}
	return strings.Join(d.wwids, "-")
}

// uniqueName is the volume's name in the Node's status.volumesInUse, as
// upstream's GetUniqueVolumeNameFromSpec with the fc plugin's
// GetVolumeName: "kubernetes.io/fc/[<wwn> ...]:<lun>" or
// "kubernetes.io/fc/[<wwid> ...]" (a WWID's spaces as underscores, where
// upstream keeps them: the name is read back from a directory's).
func (d fcDisk) uniqueName() corev1.UniqueVolumeName {
	if len(d.wwns) != 0 {
		return corev1.UniqueVolumeName(fmt.Sprintf("kubernetes.io/fc/%v:%s", d.wwns, d.lun))
	}
	return corev1.UniqueVolumeName(fmt.Sprintf("kubernetes.io/fc/%v", d.wwids))
}

// find returns the device of disk d, as upstream's searchDisk: each WWN's
// by-path link ("pci-<bus>-fc-0x<wwn>-lun-<lun>" or "fc-0x<wwn>-lun-<lun>")
// or each WWID's by-id link ("scsi-<wwid>") resolved, the multipath device
// holding it preferred; when none is a multipath device, the SCSI hosts
// are rescanned once and the links read again. Unlike upstream, the first
// disk found is kept when a later WWN finds none.
func (h FCHost) find(d fcDisk) (string, error) {
	ids := d.wwns
	if len(ids) == 0 {
		ids = d.wwids
	}
	var disk, dm string
	for rescanned := false; ; rescanned = true {
		for _, id := range ids {
			var found string
			if len(d.wwns) != 0 {
				found = h.byPath(id, d.lun)
			} else {
				found = h.byID(id)
			}
			if found == "" {
				continue
			}
			if disk == "" {
				disk = found
			}
			if dm = h.multipathOf(found); dm != "" {
				break
			}
		}
		if rescanned || dm != "" {
			break
		}
		h.rescan()
	}
	switch {
	case dm != "":
		return dm, nil
	case disk != "":
		return disk, nil
	}
	return "", errors.New(msgFCNoDisk)
}

// byPath is the device of the by-path link of target wwn's lun, "" for
// none.
func (h FCHost) byPath(wwn, lun string) string {
	name := regexp.MustCompile("^(pci-.*-fc|fc)-0x" + regexp.QuoteMeta(wwn) + "-lun-" + regexp.QuoteMeta(lun) + "$")
	dir := filepath.Join(h.dev(), "disk", "by-path")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if name.MatchString(e.Name()) {
			if disk, err := filepath.EvalSymlinks(filepath.Join(dir, e.Name())); err == nil {
				return disk
			}
		}
	}
	return ""
}

// byID is the device of wwid's by-id link, "" for none.
func (h FCHost) byID(wwid string) string {
	disk, err := filepath.EvalSymlinks(filepath.Join(h.dev(), "disk", "by-id", "scsi-"+wwid))
	if err != nil {
		return ""
	}
	return disk
}

// multipathOf is the device-mapper device that holds disk as a slave
// (upstream's FindMultipathDeviceForDevice), "" for none.
func (h FCHost) multipathOf(disk string) string {
	rel, err := filepath.Rel(h.dev(), disk)
	if err != nil || strings.Contains(rel, "/") {
		return ""
	}
	block := filepath.Join(h.sys(), "block")
	entries, _ := os.ReadDir(block)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "dm-") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(block, e.Name(), "slaves", rel)); err == nil {
			return filepath.Join(h.dev(), e.Name())
		}
	}
	return ""
}

// rescan asks every SCSI host to scan its buses for new devices, as
// upstream's scsiHostRescan ("- - -" into scsi_host/<host>/scan; a host
// that cannot is skipped).
func (h FCHost) rescan() {
	dir := filepath.Join(h.sys(), "class", "scsi_host")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		_ = os.WriteFile(filepath.Join(dir, e.Name(), "scan"), []byte("- - -"), 0o200)
	}
}

// detach removes disk (a /dev path, or what links to one) from the host,
// as upstream's DetachDisk: a multipath device is flushed from multipathd
// (multipath -f) and each of its slaves removed; a plain disk is removed
// itself. Removing flushes the device's buffers (the BLKFLSBUF ioctl,
// where upstream runs blockdev --flushbufs) and deletes it from the SCSI
// subsystem (device/delete; a device without one, such as a loop
// device, stays).
func (h FCHost) detach(ctx context.Context, disk string) error {
	dst, err := filepath.EvalSymlinks(disk)
	if err != nil {
		return fmt.Errorf("fc: resolve device %q: %w", disk, err)
	}
	devices := []string{dst}
	if name := filepath.Base(dst); strings.HasPrefix(name, "dm-") {
		slaves, _ := os.ReadDir(filepath.Join(h.sys(), "block", name, "slaves"))
		devices = devices[:0]
		for _, s := range slaves {
			devices = append(devices, filepath.Join(h.dev(), s.Name()))
		}
		if out, err := exec.CommandContext(ctx, "multipath", "-f", dst).CombinedOutput(); err != nil {
			return fmt.Errorf("fc: flush multipath device %s: %w: %s", dst, err, strings.TrimSpace(string(out)))
		}
	}
	for _, d := range devices {
		if err := flushBuffers(d); err != nil {
			klog.FromContext(ctx).Info("Cannot flush the fibre channel device's buffers; removing it anyway", "device", d, "err", err)
		}
		_ = os.WriteFile(filepath.Join(h.sys(), "block", filepath.Base(d), "device", "delete"), []byte("1"), 0o200)
	}
	return nil
}

// fcSource is a fibre channel volume as a pod uses it: its disk, the name
// of its directories (the pod's volume name inline, the PV's name for a
// claim), its filesystem and mount options, read-only or not.
type fcSource struct {
	disk     fcDisk
	name     string
	fsType   string
	options  []string
	readOnly bool
}

// fcInline is an inline fc volume's source.
func fcInline(v corev1.Volume) (fcSource, error) {
	d, err := fcDiskOf(v.FC.TargetWWNs, v.FC.Lun, v.FC.WWIDs)
	return fcSource{disk: d, name: v.Name, fsType: v.FC.FSType, readOnly: v.FC.ReadOnly}, err
}

// fcPersistent is a claim's fc PersistentVolume's source: read-only as the
// pod's claim says (upstream takes the spec's, not the PV source's,
// readOnly), with the PV's mountOptions.
func fcPersistent(c *claimed) (fcSource, error) {
	src := c.volume.Spec.FC
	d, err := fcDiskOf(src.TargetWWNs, src.Lun, src.WWIDs)
	return fcSource{disk: d, name: c.volume.Name, fsType: src.FSType, options: c.volume.Spec.MountOptions, readOnly: c.readOnly}, err
}

// fcGlobalDir is where disk d's filesystem is mounted for all its pods,
// as upstream: PluginsDir/kubernetes.io/fc/<globalName>.
func (m *Manager) fcGlobalDir(d fcDisk) string {
	return filepath.Join(m.cfg.PluginsDir, "kubernetes.io", "fc", d.globalName())
}

// setUpFC mounts a fibre channel volume as upstream's fc plugin: the disk
// found (find), its filesystem mounted once for all pods at fcGlobalDir
// (formatted when it has none: fsType, ext4 when unset; "ro" when the
// first pod's use is read-only; the mountOptions), then bound at
// PodsDir/<uid>/volumes/kubernetes.io~fc/<name> (read-only when the pod's
// use is) and, the first time and unless read-only, given the pod's
// fsGroup.
func (m *Manager) setUpFC(pod *corev1.Pod, volName string, src fcSource) (string, error) {
	if err := checkPVName(src.name); err != nil {
		return "", err
	}
	if m.cfg.PluginsDir == "" {
		return "", errors.New("fc: berth has no plugins directory to mount the disk in")
	}
	dir, mounted, err := m.mountPoint(pod, fcPlugin, src.name)
	if err != nil {
		return "", err
	}
	if !mounted {
		m.localMu.Lock()
		global, err := m.mountFCDisk(src)
		if err == nil {
			err = m.cfg.Mounter.BindMount(global, dir, src.readOnly)
		}
		m.localMu.Unlock()
		if err != nil {
			_ = os.Remove(dir)
			return "", err
		}
	}
	return m.ownBindOnce(pod, volName, dir, !mounted, src.readOnly)
}

// mountFCDisk mounts src's disk at fcGlobalDir unless it is mounted there
// already, and returns that directory. The caller holds localMu.
func (m *Manager) mountFCDisk(src fcSource) (string, error) {
	target := m.fcGlobalDir(src.disk)
	mounted, err := m.cfg.Mounter.IsMountPoint(target)
	if err != nil {
		return "", fmt.Errorf("check mount %q: %w", target, err)
	}
	if mounted {
		return target, nil
	}
	device, err := m.cfg.FC.find(src.disk)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return "", fmt.Errorf("create fc disk mount point: %w", err)
	}
	var options []string
	if src.readOnly {
		options = append(options, "ro")
	}
	if err := m.cfg.Mounter.FormatAndMount(device, target, cmp.Or(src.fsType, "ext4"), append(options, src.options...)); err != nil {
		_ = os.Remove(target)
		return "", fmt.Errorf("fc: %w", err)
	}
	return target, nil
}

// fcDetachPoll and fcDetachTimeout bound the retries of a detach, as
// upstream's UnmountDevice (a multipath device just unmounted can be busy
// for a moment).
const (
	fcDetachPoll    = 10 * time.Second
	fcDetachTimeout = 2 * time.Minute
)

// releaseFCDisks unmounts each fibre channel disk mounted below
// PluginsDir/kubernetes.io/fc that no pod's volume binds any more,
// removes its mount point and detaches the disk from the host, as
// upstream's UnmountDevice. A disk whose detach keeps failing is logged:
// it is unmounted, and nothing finds it again to retry (as upstream).
func (m *Manager) releaseFCDisks(ctx context.Context) error {
	if m.cfg.PluginsDir == "" {
		return nil
	}
	m.localMu.Lock()
	defer m.localMu.Unlock()
	globals, err := filepath.Glob(filepath.Join(m.cfg.PluginsDir, "kubernetes.io", "fc", "*"))
	if err != nil {
		return err
	}
	binds, err := filepath.Glob(filepath.Join(m.cfg.PodsDir, "*", "volumes", fcPlugin, "*"))
	if err != nil {
		return err
	}
	used := map[string]bool{}
	for _, b := range binds {
		src, err := m.cfg.Mounter.MountSource(b)
		if err != nil {
			return err
		}
		used[src] = used[src] || src != ""
	}
	for _, g := range globals {
		if filepath.Base(g) == volumeDevicesDir {
			continue
		}
		device, err := m.cfg.Mounter.MountSource(g)
		if err != nil {
			return err
		}
		if device == "" || used[device] {
			continue
		}
		if err := m.cfg.Mounter.Unmount(g); err != nil {
			return fmt.Errorf("unmount fc disk %q: %w", g, err)
		}
		if err := os.Remove(g); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove fc disk mount point %q: %w", g, err)
		}
		log := klog.FromContext(ctx)
		log.V(2).Info("Unmounted fibre channel disk", "path", g, "device", device)
		deadline := m.cfg.Clock.Now().Add(fcDetachTimeout)
		for {
			err := m.cfg.FC.detach(ctx, device)
			if err == nil {
				log.V(2).Info("Detached fibre channel disk", "device", device)
				break
			}
			if m.cfg.Clock.Now().After(deadline) || ctx.Err() != nil {
				log.Error(err, "Cannot detach the fibre channel disk", "device", device)
				break
			}
			select {
			case <-ctx.Done():
			case <-m.cfg.Clock.After(fcDetachPoll):
			}
		}
	}
	return nil
}

// fcMapDir is where disk d's block volume records its pods, as upstream's
// global map path: PluginsDir/kubernetes.io/fc/volumeDevices/<globalName>,
// with an entry named after each pod's UID (upstream bind-mounts the
// device there; berth links it).
func (m *Manager) fcMapDir(d fcDisk) string {
	return filepath.Join(m.cfg.PluginsDir, "kubernetes.io", "fc", volumeDevicesDir, d.globalName())
}

// setUpFCBlock links a claim's fc PersistentVolume of volumeMode Block at
// PodsDir/<uid>/volumeDevices/kubernetes.io~fc/<pv name> to its disk (the
// multipath device when there is one, as find), which containers get as a
// device (volumeDevices), and records the pod's use at fcMapDir/<uid>.
// Nothing is mounted, formatted or owned.
func (m *Manager) setUpFCBlock(pod *corev1.Pod, c *claimed) (string, error) {
	src, err := fcPersistent(c)
	if err != nil {
		return "", err
	}
	if err := checkPVName(src.name); err != nil {
		return "", err
	}
	if m.cfg.PluginsDir == "" {
		return "", errors.New("fc: berth has no plugins directory to map the disk in")
	}
	link := filepath.Join(m.cfg.PodsDir, string(pod.UID), volumeDevicesDir, fcPlugin, src.name)
	entry := filepath.Join(m.fcMapDir(src.disk), string(pod.UID))
	if dev, err := os.Readlink(link); err == nil {
		if got, err := os.Readlink(entry); err == nil && got == dev {
			return link, nil // mapped by an earlier sync: no search again
		}
	}
	m.localMu.Lock()
	defer m.localMu.Unlock()
	device, err := m.cfg.FC.find(src.disk)
	if err != nil {
		return "", err
	}
	if info, err := os.Stat(device); err != nil || info.Mode()&fs.ModeDevice == 0 || info.Mode()&fs.ModeCharDevice != 0 {
		return "", fmt.Errorf("fc: %q is not a block device (%v)", device, err)
	}
	if _, err := linkDevice(entry, device); err != nil {
		return "", err
	}
	return linkDevice(link, device)
}

// releaseFCBlocks removes pod uid's entries from the fc block volumes'
// map directories and detaches each disk no pod uses any more (its map
// directory empty), as upstream's DetachBlockFCDisk once the volume is
// unmapped from its last pod. A failed detach is logged: the map
// directory is gone, and nothing would find the disk again to retry (as
// upstream).
func (m *Manager) releaseFCBlocks(ctx context.Context, uid string) error {
	if m.cfg.PluginsDir == "" {
		return nil
	}
	m.localMu.Lock()
	defer m.localMu.Unlock()
	entries, err := filepath.Glob(filepath.Join(m.cfg.PluginsDir, "kubernetes.io", "fc", volumeDevicesDir, "*", uid))
	if err != nil {
		return err
	}
	for _, e := range entries {
		device, err := os.Readlink(e)
		if err != nil {
			return fmt.Errorf("read fc block volume entry: %w", err)
		}
		if err := os.Remove(e); err != nil {
			return fmt.Errorf("remove fc block volume entry: %w", err)
		}
		dir := filepath.Dir(e)
		if err := os.Remove(dir); err != nil {
			continue // another pod maps the disk (or a stray file is left)
		}
		if err := m.cfg.FC.detach(ctx, device); err != nil {
			klog.FromContext(ctx).Error(err, "Cannot detach the fibre channel disk", "device", device)
			continue
		}
		klog.FromContext(ctx).V(2).Info("Detached fibre channel disk", "device", device, "volume", filepath.Base(dir))
	}
	return nil
}

// parseFCName reads a disk back from its directory name, as upstream's
// parsePDName: "<wwn>-...-lun-<lun>", else WWIDs joined with "-".
func parseFCName(name string) (fcDisk, bool) {
	parts := strings.Split(name, "-")
	n := len(parts)
	if n >= 3 && parts[n-2] == "lun" {
		if _, err := strconv.Atoi(parts[n-1]); err != nil {
			return fcDisk{}, false
		}
		return fcDisk{wwns: parts[:n-2], lun: parts[n-1]}, true
	}
	return fcDisk{wwids: parts}, name != ""
}

// FCVolumesInUse returns the unique names of the fibre channel volumes
// mounted (PluginsDir/kubernetes.io/fc/<disk>) or mapped to a pod
// (PluginsDir/kubernetes.io/fc/volumeDevices/<disk>) on the node, for the
// Node's status.volumesInUse as upstream reports its attachable volumes:
// from before a pod's bind until the disk is released, and again after
// berth restarts. Never nil.
func (m *Manager) FCVolumesInUse() []corev1.UniqueVolumeName {
	out := []corev1.UniqueVolumeName{}
	if m.cfg.PluginsDir == "" {
		return out
	}
	root := filepath.Join(m.cfg.PluginsDir, "kubernetes.io", "fc")
	for _, dir := range []string{root, filepath.Join(root, volumeDevicesDir)} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() || (dir == root && e.Name() == volumeDevicesDir) {
				continue
			}
			if d, ok := parseFCName(e.Name()); ok {
				out = append(out, d.uniqueName())
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
