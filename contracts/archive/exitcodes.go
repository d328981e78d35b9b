package archive

import "github.com/wsconverge/converge/contracts"

// Exit statuses of the storage job (SPEC 5.3) that carry no error code.
const (
	// ExitOK: the job did what it was asked (an archive that already
	// existed counts).
	ExitOK = 0
	// ExitFailed: a failure with no error code of its own.
	ExitFailed = 1
	// ExitUsage: the job was started with a missing or malformed setting.
	ExitUsage = 2
)

// exitCodes is the storage job's stable exit-status table: one distinct
// status per error code, never reused, never renumbered. Statuses 10–16
// are the codes the job itself produces; the rest are reserved so that any
// ProviderError code survives a round trip through a process status.
// Statuses 0–2 are above; 125–127 and 128+n belong to Docker and signals.
var exitCodes = map[contracts.ErrorCode]int{
	contracts.CodeArchiveNotFound:  10,
	contracts.CodeMetaNotFound:     11,
	contracts.CodeChecksumMismatch: 12,
	contracts.CodeS3AccessError:    13,
	contracts.CodeTarExtractFailed: 14,
	contracts.CodeDiskFull:         15,
	contracts.CodeVolumeNotFound:   16,

	contracts.CodeK8sAPIError:          30,
	contracts.CodeDockerUnreachable:    31,
	contracts.CodeVolumeCreateFailed:   32,
	contracts.CodeContainerStartFailed: 33,
	contracts.CodeImagePullFailed:      34,
	contracts.CodeHealthCheckFailed:    35,
	contracts.CodeContainerCreate:      36,
	contracts.CodeVolumeInUse:          37,
}

var codesByExit = func() map[int]contracts.ErrorCode {
	m := make(map[int]contracts.ErrorCode, len(exitCodes))
	for code, n := range exitCodes {
		m[n] = code
	}
	return m
}()

// ExitCode is the process exit status the storage job uses for an error
// code; an unknown code gets ExitFailed.
func ExitCode(code contracts.ErrorCode) int {
	if n, ok := exitCodes[code]; ok {
		return n
	}
	return ExitFailed
}

// CodeOfExit maps a storage job's exit status back to its error code;
// false for 0, ExitFailed, ExitUsage and any status outside the table.
func CodeOfExit(n int) (contracts.ErrorCode, bool) {
	code, ok := codesByExit[n]
	return code, ok
}
