package natsjobs

import "context"

// ListPageScanning is ListPage reading at most scan stored jobs a page
// (1,000 otherwise).
func ListPageScanning(ctx context.Context, q *Queue, state State, o ListOptions, scan int) (Page, error) {
	return q.listPage(ctx, state, o, scan)
}
