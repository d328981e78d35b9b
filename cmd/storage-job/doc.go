// Command storage-job archives a workspace's home volume to S3 and restores
// it (SPEC 5.3). It runs isolated in its own container, knows no database and
// builds no object paths: everything it needs comes from its environment.
//
// Settings (environment):
//
//	JOB_MODE       archive | restore (or the first argument)
//	ARCHIVE_URL    s3://bucket/archives/{id}/{op_id}/home.tar.zst
//	S3_ENDPOINT    host:port, or http(s)://host:port
//	S3_ACCESS_KEY  access key
//	S3_SECRET_KEY  secret key
//	S3_SECURE      use TLS (default false)
//	DATA_DIR       the volume (default /data)
//	TMPDIR         scratch space (default /tmp)
//	RESTORE_MAX_BYTES    most file bytes a restore writes (default 256 GiB)
//	RESTORE_MAX_ENTRIES  most entries a restore extracts (default 10,000,000)
//
// archive: when the archive object and its ".meta" both exist it does
// nothing. Otherwise it packs DATA_DIR (contracts/archive.PackDir: tar,
// zstd, SHA-256) into a file under TMPDIR, uploads it, then uploads ".meta"
// last, as the commit marker: "sha256:<hex>" on its first line, then
// "bytes=N" and "entries=N", what the archive unpacks to.
//
// restore: it downloads ".meta" and the archive (ARCHIVE_NOT_FOUND,
// META_NOT_FOUND when missing), checks the checksum (CHECKSUM_MISMATCH),
// extracts into a staging directory inside DATA_DIR (same file system, so
// entries are moved by rename) refusing unsafe entries, sparse files among
// them (TAR_EXTRACT_FAILED), then makes DATA_DIR equal to the staging
// tree: entries the archive lacks are deleted, the others moved in. The
// extraction is bounded: it stops before the first entry that would pass
// the quota or the free space of DATA_DIR's file system (DISK_FULL), or
// what the .meta declares (CHECKSUM_MISMATCH: the archive lies about
// itself); a .meta of the original format, the checksum alone, declares
// nothing and is bound by the quota only. Leftover staging directories
// (".converge-restore-*" at the top of DATA_DIR) from an interrupted run are
// removed by both modes.
//
// Transient S3 failures are retried 3 times (after 5, 15 and 30 s).
//
// Output: logs go to stderr. Standard output carries the result: on success
// one summary line; on failure "error: <message>" and then, as the last
// line, the error code (SPEC 1.5), or FAILED for a failure without a code,
// or USAGE for a bad setting. The exit status is
// archive.ExitCode(code) (archive.ExitFailed, archive.ExitUsage).
package main
