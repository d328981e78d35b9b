package contracts

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	testID   = "3f2a9c4e-1b7d-4e8a-9c0f-5d6e7f8a9b0c"
	testOpID = "7c1e2d3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
)

func TestNames(t *testing.T) {
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"1.4 row 1: container ws-{id}", ContainerName(testID), "ws-" + testID},
		{"1.4 row 2: volume ws-{id}-home", VolumeName(testID), "ws-" + testID + "-home"},
		{"1.4 row 3: archive archives/{id}/{op_id}/home.tar.zst", ArchiveKey(testID, testOpID), "archives/" + testID + "/" + testOpID + "/home.tar.zst"},
		{"1.4 row 4: checksum {archive}.meta", MetaKey(ArchiveKey(testID, testOpID)), "archives/" + testID + "/" + testOpID + "/home.tar.zst.meta"},
		{"1.4 row 5: workspace mount path", WorkspaceMountPath, "/home/coder"},
		{"1.4 row 5: storage job mount path", StorageJobMountPath, "/data"},
		{"op prefix holds the op's archive", OpPrefix(testID, testOpID), "archives/" + testID + "/" + testOpID + "/"},
		{"archive of a .meta", ArchiveOfMeta(MetaKey("archives/a/b/home.tar.zst")), "archives/a/b/home.tar.zst"},
		{"3: workspace channel", WorkspaceChannel("w1"), "workspace:w1"},
		{"4.4: connection counter", ConnKey("w1"), "ws_conn:w1"},
		{"4.4: idle timer", IdleTimerKey("w1"), "idle_timer:w1"},
		{"3: monitor trigger channel", MonitorTriggerChannel, "monitor:trigger"},
		{"4.6: changes channel", ChangesChannel, "workspace_changes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.got)
		})
	}
	require.True(t, strings.HasPrefix(ArchiveKey(testID, testOpID), OpPrefix(testID, testOpID)))
	require.True(t, IsMetaKey(MetaKey(ArchiveKey(testID, testOpID))))
	require.False(t, IsMetaKey(ArchiveKey(testID, testOpID)))
}

func TestNamesAreDNS1123(t *testing.T) {
	// 1.4: names are DNS-1123 labels: lower-case alphanumerics and hyphens,
	// starting and ending alphanumeric, at most 63 characters.
	label := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for _, n := range []string{ContainerName(testID), VolumeName(testID)} {
		require.Regexp(t, label, n)
		require.LessOrEqual(t, len(n), 63, n)
		require.NotContains(t, n, "_")
	}
	for _, seg := range strings.Split(ArchiveKey(testID, testOpID), "/") {
		require.NotContains(t, seg, "_")
	}
}

func TestParseArchiveKey(t *testing.T) {
	good := []struct {
		name string
		key  string
	}{
		{"round trip of an archive key", ArchiveKey(testID, testOpID)},
		{"round trip of its checksum key", MetaKey(ArchiveKey(testID, testOpID))},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			id, op, ok := ParseArchiveKey(tc.key)
			require.True(t, ok)
			require.Equal(t, testID, id)
			require.Equal(t, testOpID, op)
		})
	}
	bad := []struct {
		name string
		key  string
	}{
		{"empty", ""},
		{"prefix only", "archives/"},
		{"no op_id", "archives/" + testID},
		{"no file under the op", "archives/" + testID + "/" + testOpID},
		{"empty file under the op", "archives/" + testID + "/" + testOpID + "/"},
		{"empty id", "archives//" + testOpID + "/home.tar.zst"},
		{"empty op_id", "archives/" + testID + "//home.tar.zst"},
		{"wrong prefix", "backups/" + testID + "/" + testOpID + "/home.tar.zst"},
		{"prefix without slash", "archives" + testID + "/" + testOpID + "/home.tar.zst"},
	}
	for _, tc := range bad {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			id, op, ok := ParseArchiveKey(tc.key)
			require.False(t, ok)
			require.Empty(t, id)
			require.Empty(t, op)
		})
	}
}
