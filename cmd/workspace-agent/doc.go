// Command workspace-agent is the process inside a workspace container
// (image converge/workspace-agent:dev). It serves HTTP on AGENT_ADDR
// (default ":8080") over the home directory HOME_DIR (default /home/coder),
// the workspace's volume:
//
//	GET  /healthz        200 "ok" when the home is writable, else 503
//	PUT  /files/{path}   writes the body (at most 16 MiB, else 413) to the
//	                     file, creating parent directories; 201 when new,
//	                     200 when replaced
//	GET  /files/{path}   the file's bytes; 404 when missing
//	GET  /files/         every regular file, as JSON
//
// A path must be relative and clean: absolute paths, "..", "." and empty
// components are refused with 400, and so is anything that resolves outside
// the home through a symbolic link (every access goes through an os.Root).
// Errors are JSON objects {"error": "..."}. SIGTERM or SIGINT stops the
// server gracefully: requests in flight finish first.
package main
