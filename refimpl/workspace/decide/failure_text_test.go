package decide

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wsconverge/converge/contracts"
)

func TestFailurePatchSanitizesProviderText(t *testing.T) {
	w := row(withOp(contracts.OpStarting))
	p, _ := FailurePatch(w, contracts.CodeImagePullFailed, "pull \x00failed\xff", map[string]any{"detail": "d\x00"}, t0)
	require.NoError(t, contracts.CheckPatch(&p))
	require.Equal(t, "pull failed\uFFFD", p.ErrorMessage.V)
}
