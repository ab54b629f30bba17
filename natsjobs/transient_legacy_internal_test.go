package natsjobs

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
)

// The errors of nats.go's older JetStream API (the status bucket's
// watch is made through it) are transient as the newer API's are: the
// cluster without a meta leader answers 503; JetStream disabled does not
// pass.
func TestTransientKnowsTheOlderAPIsErrors(t *testing.T) {
	unavailable := &nats.APIError{Code: 503, ErrorCode: 10008, Description: "JetStream system temporarily unavailable"}
	assert.True(t, transient(unavailable))
	assert.True(t, transient(fmt.Errorf("making the watch: %w", unavailable)))
	assert.False(t, transient(nats.ErrJetStreamNotEnabled))
	assert.False(t, transient(nats.ErrJetStreamNotEnabledForAccount))
	assert.False(t, transient(&nats.APIError{Code: 400, ErrorCode: 10071, Description: "wrong last sequence"}))
}
