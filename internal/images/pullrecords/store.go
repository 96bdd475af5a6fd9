package pullrecords

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kubeletconfigv1alpha1 "k8s.io/kubelet/config/v1alpha1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/berthk8s/berth/internal/platform/checkpoint"
)

const (
	filePrefix = "sha256-"
	// tmpSuffix marks the upstream kubelet's temporary record files,
	// which listings skip.
	tmpSuffix = ".tmp"
	// maxRecordBytes bounds what is read of one record file: a record
	// lists at most a few hundred secrets.
	maxRecordBytes = 1 << 20
)

// Store reads and writes the record files under <root-dir>/image_manager,
// in upstream's layout and format. Writes are atomic (a temporary file
// renamed into place). It holds no state beyond its paths.
type Store struct {
	pulling, pulled string
	codecs          serializer.CodecFactory
}

// OpenStore creates the record directories under rootDir if needed.
func OpenStore(rootDir string) (*Store, error) {
	scheme := runtime.NewScheme()
	if err := kubeletconfigv1beta1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register kubelet.config.k8s.io/v1beta1: %w", err)
	}
	if err := kubeletconfigv1alpha1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register kubelet.config.k8s.io/v1alpha1: %w", err)
	}
	s := &Store{
		pulling: filepath.Join(rootDir, "image_manager", "pulling"),
		pulled:  filepath.Join(rootDir, "image_manager", "pulled"),
		codecs:  serializer.NewCodecFactory(scheme, serializer.EnableStrict),
	}
	for _, dir := range []string{s.pulling, s.pulled} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create image pull records directory %q: %w", dir, err)
		}
	}
	return s, nil
}

// fileName is a record's file name: upstream's cacheFilename.
func fileName(key string) string {
	return fmt.Sprintf("%s%x", filePrefix, sha256.Sum256([]byte(key)))
}

// Intents returns the images of every intent file, and whether each was
// written in an older API version (to be rewritten). Files that cannot be
// read or decoded are skipped and reported in the error.
func (s *Store) Intents() (images []string, old []bool, err error) {
	err = s.each(s.pulling, func(path string, obj runtime.Object) error {
		switch in := obj.(type) {
		case *kubeletconfigv1beta1.ImagePullIntent:
			images, old = append(images, in.Image), append(old, false)
		case *kubeletconfigv1alpha1.ImagePullIntent:
			images, old = append(images, in.Image), append(old, true)
		default:
			return fmt.Errorf("decode image pull intent %q: unexpected %T", path, obj)
		}
		return nil
	})
	return images, old, err
}

// Records returns every pulled record, converted to v1beta1, and whether
// each was written in an older API version.
func (s *Store) Records() (recs []*kubeletconfigv1beta1.ImagePulledRecord, old []bool, err error) {
	err = s.each(s.pulled, func(path string, obj runtime.Object) error {
		rec, isOld, err := asRecord(obj)
		if err != nil {
			return fmt.Errorf("decode image pulled record %q: %w", path, err)
		}
		recs, old = append(recs, rec), append(old, isOld)
		return nil
	})
	return recs, old, err
}

// asRecord converts a decoded record to v1beta1; v1alpha1 has the same
// fields.
func asRecord(obj runtime.Object) (*kubeletconfigv1beta1.ImagePulledRecord, bool, error) {
	switch r := obj.(type) {
	case *kubeletconfigv1beta1.ImagePulledRecord:
		return r, false, nil
	case *kubeletconfigv1alpha1.ImagePulledRecord:
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, false, err
		}
		out := &kubeletconfigv1beta1.ImagePulledRecord{}
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, false, err
		}
		return out, true, nil
	}
	return nil, false, fmt.Errorf("unexpected %T", obj)
}

// each decodes every record file of dir (regular files named by
// fileName, not temporary ones), collecting errors and going on.
func (s *Store) each(dir string, fn func(path string, obj runtime.Object) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list image pull records %q: %w", dir, err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, filePrefix) || strings.HasSuffix(name, tmpSuffix) {
			continue
		}
		path := filepath.Join(dir, name)
		obj, err := s.read(path)
		if err == nil {
			err = fn(path, obj)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Store) read(path string) (runtime.Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read image pull record %q: %w", path, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read image pull record %q: %w", path, err)
	}
	if len(raw) > maxRecordBytes {
		return nil, fmt.Errorf("read image pull record %q: larger than %d bytes", path, maxRecordBytes)
	}
	obj, _, err := s.codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode image pull record %q: %w", path, err)
	}
	return obj, nil
}

// WriteIntent writes the intent to pull image durably: the file and its
// directory entry are on disk when it returns, so that a pull that
// completes is never forgotten by a crash, whatever kind.
func (s *Store) WriteIntent(image string) error {
	in := &kubeletconfigv1beta1.ImagePullIntent{Image: image}
	if err := s.write(s.pulling, fileName(image), in); err != nil {
		return err
	}
	return checkpoint.SyncDir(s.pulling)
}

// DeleteIntent removes the intent to pull image, if any.
func (s *Store) DeleteIntent(image string) error {
	return remove(filepath.Join(s.pulling, fileName(image)))
}

// WriteRecord writes a pulled record, named by its image reference.
func (s *Store) WriteRecord(rec *kubeletconfigv1beta1.ImagePulledRecord) error {
	return s.write(s.pulled, fileName(rec.ImageRef), rec)
}

// DeleteRecord removes the pulled record of imageRef, if any.
func (s *Store) DeleteRecord(imageRef string) error {
	return remove(filepath.Join(s.pulled, fileName(imageRef)))
}

func remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove image pull record %q: %w", path, err)
	}
	return nil
}

// write encodes obj as kubelet.config.k8s.io/v1beta1 JSON and replaces
// dir/name with it atomically (internal/platform/checkpoint's Write; its temporary
// file does not start with filePrefix, so listings skip it).
func (s *Store) write(dir, name string, obj runtime.Object) error {
	info, ok := runtime.SerializerInfoForMediaType(s.codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		return errors.New("encode image pull record: no JSON serializer")
	}
	var buf bytes.Buffer
	enc := s.codecs.EncoderForVersion(info.Serializer, kubeletconfigv1beta1.SchemeGroupVersion)
	if err := enc.Encode(obj, &buf); err != nil {
		return fmt.Errorf("encode image pull record: %w", err)
	}
	return checkpoint.Write(dir, name, buf.Bytes())
}
