// Package archive is the storage job's archive format (SPEC 5.3): a zstd
// compressed tar of a home volume, committed by a ".meta" object holding its
// checksum.
//
// Output is deterministic: entries in tree order (a directory before its
// contents, names compared component by component), modification time 0,
// owner 0:0, mode 0644 for files (0755 when executable, PackDir only) and
// 0755 for directories, one zstd stream at a fixed level. The same tree
// always packs to the same bytes, whether it comes from a map (Pack, used by
// the in-memory fakes) or a real directory (PackDir, used by the storage-job
// binary).
//
// Reading refuses anything that could write outside the target: absolute
// names, ".." components, symbolic or hard links leaving the root, entries
// beneath a symbolic link, and device, character and FIFO entries. Owners
// are never restored. Such refusals wrap ErrUnsafeEntry.
package archive
