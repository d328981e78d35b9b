package contracts

import "strings"

// ContainerName is the container of workspace id.
func ContainerName(id string) string { return "ws-" + id }

// VolumeName is the home volume of workspace id.
func VolumeName(id string) string { return "ws-" + id + "-home" }

// ArchivePrefix is the object prefix holding every archive.
const ArchivePrefix = "archives/"

// ArchiveKey is the expected archive object key of (id, opID).
func ArchiveKey(id, opID string) string {
	return ArchivePrefix + id + "/" + opID + "/home.tar.zst"
}

// MetaKey is the checksum object that commits archive key.
func MetaKey(key string) string { return key + ".meta" }

// IsMetaKey reports whether key names a checksum object.
func IsMetaKey(key string) bool { return strings.HasSuffix(key, ".meta") }

// ArchiveOfMeta is the archive a checksum object belongs to.
func ArchiveOfMeta(meta string) string { return strings.TrimSuffix(meta, ".meta") }

// OpPrefix is the prefix of everything archived under (id, opID).
func OpPrefix(id, opID string) string { return ArchivePrefix + id + "/" + opID + "/" }

// ParseArchiveKey splits an archive or checksum key into workspace id and
// op_id; ok is false for a key not of the form archives/{id}/{op_id}/….
func ParseArchiveKey(key string) (id, opID string, ok bool) {
	rest, found := strings.CutPrefix(key, ArchivePrefix)
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// Mount paths.
const (
	WorkspaceMountPath  = "/home/coder"
	StorageJobMountPath = "/data"
)

// Bus channel and key names (SPEC 3, 4.4, 4.5).
const (
	MonitorTriggerChannel = "monitor:trigger"
	ChangesChannel        = "workspace_changes"
)

// WorkspaceChannel is the bus channel carrying events of workspace id.
func WorkspaceChannel(id string) string { return "workspace:" + id }

// ConnKey counts open WebSocket connections of workspace id.
func ConnKey(id string) string { return "ws_conn:" + id }

// IdleTimerKey is set while workspace id has been idle for less than its
// standby TTL after its last disconnect.
func IdleTimerKey(id string) string { return "idle_timer:" + id }

// OrphanTimerKey holds the first sighting (unix seconds) of an orphaned
// archive object.
func OrphanTimerKey(objectKey string) string { return "gc_orphan:" + objectKey }
