package etcdmap

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Files this package keeps in the node's data directory (--dir).
const (
	// idFile holds the node id, made at the first start.
	idFile = "cluster-node-id"
	// mapFile holds the last map applied, with its epoch.
	mapFile = "cluster-map.json"
)

// NodeID returns the node id kept in dir, making and storing a random one
// (40 hex digits, like Redis's node ids) at the first call. The id is what
// makes a restarted node the same member, so it must survive restarts with
// the disk tier.
func NodeID(dir string) (string, error) {
	path := filepath.Join(dir, idFile)
	data, err := os.ReadFile(path)
	if err == nil {
		id := strings.TrimSpace(string(data))
		if len(id) != 40 || strings.Trim(id, "0123456789abcdef") != "" {
			return "", fmt.Errorf("%s: %q is not a node id (40 lower-case hex digits)", path, id)
		}
		return id, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read node id: %w", err)
	}
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make node id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	if err := writeFileAtomic(path, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("store node id: %w", err)
	}
	return id, nil
}

// savedMap is mapFile's content.
type savedMap struct {
	Epoch int64     `json:"epoch"`
	Map   mapRecord `json:"map"`
}

// loadSavedMap reads the last map applied in dir; ok is false when there
// is none (or it cannot be read, which is logged by the caller).
func loadSavedMap(dir string) (savedMap, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, mapFile))
	if errors.Is(err, fs.ErrNotExist) {
		return savedMap{}, false, nil
	}
	if err != nil {
		return savedMap{}, false, fmt.Errorf("read last slot map: %w", err)
	}
	var sm savedMap
	if err := json.Unmarshal(data, &sm); err != nil {
		return savedMap{}, false, fmt.Errorf("%s: %w", mapFile, err)
	}
	return sm, true, nil
}

// storeMap keeps the map applied at epoch in dir.
func storeMap(dir string, epoch int64, r mapRecord) error {
	data, err := json.Marshal(savedMap{Epoch: epoch, Map: r})
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, mapFile), data)
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, so that a crash leaves the old content or the new, never half.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
