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
//
// archive: when the archive object and its ".meta" both exist it does
// nothing. Otherwise it packs DATA_DIR (contracts/archive.PackDir: tar,
// zstd, SHA-256) into a file under TMPDIR, uploads it, then uploads ".meta"
// ("sha256:<hex>") last, as the commit marker.
//
// restore: it downloads ".meta" and the archive (ARCHIVE_NOT_FOUND,
// META_NOT_FOUND when missing), checks the checksum (CHECKSUM_MISMATCH),
// extracts into a staging directory inside DATA_DIR (same file system, so
// entries are moved by rename) refusing unsafe entries (TAR_EXTRACT_FAILED),
// then makes DATA_DIR equal to the staging tree: entries the archive lacks
// are deleted, the others moved in. Leftover staging directories
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
