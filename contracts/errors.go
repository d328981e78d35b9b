package contracts

import (
	"errors"
	"fmt"
	"time"
)

// Reason classifies an error recorded on a workspace (SPEC 1.5).
type Reason string

// Reasons.
const (
	ReasonMismatch      Reason = "Mismatch"
	ReasonUnreachable   Reason = "Unreachable"
	ReasonActionFailed  Reason = "ActionFailed"
	ReasonTimeout       Reason = "Timeout"
	ReasonRetryExceeded Reason = "RetryExceeded"
	ReasonDataLost      Reason = "DataLost"
)

// Retried reports whether the reconciler retries an error of this reason.
func (r Reason) Retried() bool {
	return r == ReasonMismatch || r == ReasonUnreachable || r == ReasonActionFailed
}

// ErrorCode is a provider or storage-job error code (SPEC 1.5, 5.3).
type ErrorCode string

// Error codes.
const (
	CodeArchiveNotFound      ErrorCode = "ARCHIVE_NOT_FOUND"
	CodeMetaNotFound         ErrorCode = "META_NOT_FOUND"
	CodeChecksumMismatch     ErrorCode = "CHECKSUM_MISMATCH"
	CodeS3AccessError        ErrorCode = "S3_ACCESS_ERROR"
	CodeK8sAPIError          ErrorCode = "K8S_API_ERROR"
	CodeDockerUnreachable    ErrorCode = "DOCKER_UNREACHABLE"
	CodeTarExtractFailed     ErrorCode = "TAR_EXTRACT_FAILED"
	CodeVolumeCreateFailed   ErrorCode = "VOLUME_CREATE_FAILED"
	CodeContainerStartFailed ErrorCode = "CONTAINER_START_FAILED"
	CodeImagePullFailed      ErrorCode = "IMAGE_PULL_FAILED"
	CodeHealthCheckFailed    ErrorCode = "HEALTH_CHECK_FAILED"
	CodeDiskFull             ErrorCode = "DISK_FULL"
	CodeContainerCreate      ErrorCode = "CONTAINER_CREATE_FAILED"
	CodeVolumeNotFound       ErrorCode = "VOLUME_NOT_FOUND"
	CodeVolumeInUse          ErrorCode = "VOLUME_IN_USE"
)

// AllErrorCodes lists every code, in SPEC order.
var AllErrorCodes = []ErrorCode{
	CodeArchiveNotFound, CodeMetaNotFound, CodeChecksumMismatch,
	CodeS3AccessError, CodeK8sAPIError, CodeDockerUnreachable,
	CodeTarExtractFailed, CodeVolumeCreateFailed, CodeContainerStartFailed, CodeImagePullFailed, CodeHealthCheckFailed,
	CodeDiskFull, CodeContainerCreate, CodeVolumeNotFound,
	CodeVolumeInUse,
}

// Classify maps an error code to its reason and whether it is terminal at
// once (SPEC 1.5). An unknown code is a retried ActionFailed. VOLUME_IN_USE
// (delete_volume while a container holds it, SPEC 5.2) is a retried
// ActionFailed: the container is expected to go away.
func Classify(code ErrorCode) (reason Reason, terminal bool) {
	switch code {
	case CodeArchiveNotFound, CodeMetaNotFound, CodeChecksumMismatch:
		return ReasonDataLost, true
	case CodeS3AccessError, CodeK8sAPIError, CodeDockerUnreachable:
		return ReasonUnreachable, false
	case CodeDiskFull, CodeContainerCreate, CodeVolumeNotFound:
		return ReasonActionFailed, true
	}
	return ReasonActionFailed, false
}

// ProviderError is the error every provider returns for a failed call.
type ProviderError struct {
	Code    ErrorCode
	Message string
	Context map[string]any
}

func (e *ProviderError) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}

// NewProviderError builds a ProviderError.
func NewProviderError(code ErrorCode, format string, args ...any) *ProviderError {
	return &ProviderError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf extracts the provider error code of err; a non-provider error is
// reported as unreachable (a transport failure).
func CodeOf(err error) ErrorCode {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return CodeDockerUnreachable
}

// ErrorInfo is the error_info column (SPEC 1.5).
type ErrorInfo struct {
	Reason     Reason         `json:"reason"`
	Message    string         `json:"message"`
	IsTerminal bool           `json:"is_terminal"`
	Operation  Operation      `json:"operation"`
	ErrorCount int            `json:"error_count"`
	Context    map[string]any `json:"context"`
	OccurredAt time.Time      `json:"occurred_at"`
}

// Clone deep-copies the top level of Context.
func (e ErrorInfo) Clone() ErrorInfo {
	if e.Context != nil {
		c := make(map[string]any, len(e.Context))
		for k, v := range e.Context {
			c[k] = v
		}
		e.Context = c
	}
	return e
}

// Violation names carried in error_info.context.
const ViolationContainerWithoutVolume = "ContainerWithoutVolume"

// Sentinel errors of the ports.
var (
	// ErrNotFound: no such row or object.
	ErrNotFound = errors.New("not found")
	// ErrFenced: a coordinator write carried an epoch that is no longer
	// the leader's (SPEC 3.1).
	ErrFenced = errors.New("fenced: leader epoch is stale")
	// ErrNotLeader: the leader lock is not (or no longer) held.
	ErrNotLeader = errors.New("not leader")
	// ErrCrashed: the caller's process is dead (simulated fail-stop).
	ErrCrashed = errors.New("crashed")
	// ErrUnavailable: a backing service did not answer.
	ErrUnavailable = errors.New("unavailable")
)
