package contracts

// API error codes (SPEC 4.3).
const (
	APIInvalidState  = "INVALID_STATE"
	APIBadRequest    = "BAD_REQUEST"
	APINotFound      = "NOT_FOUND"
	APIUnauthorized  = "UNAUTHORIZED"
	APIForbidden     = "FORBIDDEN"
	APITooLarge      = "PAYLOAD_TOO_LARGE"
	APILimitExceeded = "workspace_limit_exceeded"
	APIInternal      = "INTERNAL"
)

// APIError is an API rejection: an HTTP status and the JSON error body.
type APIError struct {
	Status  int
	Code    string
	Message string
	Limit   *LimitExceeded
}

func (e *APIError) Error() string { return e.Code + ": " + e.Message }
