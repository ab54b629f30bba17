package natsjobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A KeyValue Get is a direct get, which any replica of the bucket's
// stream answers: on a queue of several Replicas a follower may not yet
// hold a change that the leader stored and the queue's watch has already
// told of. Wait reads a record after subscribing to its changes, so a
// read older than the watch would miss a job's end for good. Records are
// read from the stream's leader instead, which holds every change a
// watch has seen.

// msgGetResponse is the JetStream API's answer to a message get.
type msgGetResponse struct {
	Error   *jetstream.APIError `json:"error"`
	Message *struct {
		Header   []byte `json:"hdrs"`
		Data     []byte `json:"data"`
		Sequence uint64 `json:"seq"`
	} `json:"message"`
}

// latest returns id's record, encoded, and its revision, as the status
// bucket's leader holds them; ErrNotFound if it has none.
func (q *Queue) latest(ctx context.Context, id ID) ([]byte, uint64, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opTimeout)
		defer cancel()
	}
	bucket := q.statuses.Bucket()
	req, err := json.Marshal(struct {
		LastBySubject string `json:"last_by_subj"`
	}{"$KV." + bucket + "." + string(id)})
	if err != nil {
		return nil, 0, err
	}
	m, err := q.js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET.KV_"+bucket, req)
	if err != nil {
		return nil, 0, fmt.Errorf("natsjobs: status of job %s: %w", id, err)
	}
	var resp msgGetResponse
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return nil, 0, fmt.Errorf("natsjobs: status of job %s: %w", id, err)
	}
	switch {
	case resp.Error != nil && resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound:
		return nil, 0, ErrNotFound
	case resp.Error != nil:
		return nil, 0, fmt.Errorf("natsjobs: status of job %s: %w", id, resp.Error)
	case resp.Message == nil:
		return nil, 0, fmt.Errorf("natsjobs: status of job %s: %w", id, errors.New("an empty answer"))
	}
	if len(resp.Message.Header) > 0 {
		h, err := nats.DecodeHeadersMsg(resp.Message.Header)
		if err != nil {
			return nil, 0, fmt.Errorf("natsjobs: status of job %s: %w", id, err)
		}
		if h.Get("KV-Operation") != "" { // a delete or a purge
			return nil, 0, ErrNotFound
		}
	}
	return resp.Message.Data, resp.Message.Sequence, nil
}
