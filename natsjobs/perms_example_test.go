package natsjobs_test

import (
	"fmt"

	"github.com/offloadgo/offload/natsjobs"
	"github.com/offloadgo/offload/natsremote"
)

// printPermissions prints p as nats-server's configuration does (quoted:
// a bare $ there names a variable).
func printPermissions(p natsremote.Permissions) {
	for _, list := range []struct {
		name     string
		subjects []string
	}{{"publish", p.Publish}, {"subscribe", p.Subscribe}} {
		fmt.Printf("%s: [\n", list.name)
		for _, s := range list.subjects {
			fmt.Printf("  %q\n", s)
		}
		fmt.Println("]")
	}
}

// The permissions of the worker services of the queue "reports", as
// nats-server's authorization block lists a user's.
func ExampleWorkerPermissions() {
	p := natsjobs.WorkerPermissions("reports", "")
	printPermissions(p)
	// Output:
	// publish: [
	//   "$JS.API.STREAM.INFO.OFFLOAD_JOBS_reports"
	//   "$JS.API.STREAM.INFO.OFFLOAD_JOBS_reports_DEAD"
	//   "$JS.API.STREAM.INFO.OFFLOAD_JOBS_reports_SCHEDULED"
	//   "$JS.API.STREAM.INFO.KV_OFFLOAD_JOBS_reports_STATUS"
	//   "$JS.API.STREAM.INFO.KV_OFFLOAD_JOBS_reports_KEYS"
	//   "$JS.API.CONSUMER.INFO.OFFLOAD_JOBS_reports.workers"
	//   "$JS.API.CONSUMER.MSG.NEXT.OFFLOAD_JOBS_reports.workers"
	//   "$KV.OFFLOAD_JOBS_reports_STATUS.>"
	//   "offload.jobs.reports.dead.*"
	//   "$JS.ACK.OFFLOAD_JOBS_reports.workers.>"
	//   "$JS.ACK.*.*.OFFLOAD_JOBS_reports.workers.>"
	//   "$JS.API.STREAM.MSG.GET.KV_OFFLOAD_JOBS_reports_STATUS"
	//   "$JS.API.DIRECT.GET.KV_OFFLOAD_JOBS_reports_STATUS"
	//   "$JS.API.DIRECT.GET.KV_OFFLOAD_JOBS_reports_STATUS.>"
	// ]
	// subscribe: [
	//   "_INBOX.>"
	//   "offload.jobs.reports.cancel"
	// ]
}

// The permissions of the services that enqueue jobs on the queue
// "reports" and wait for them.
func ExampleEnqueuerPermissions() {
	p := natsjobs.EnqueuerPermissions("reports", "")
	printPermissions(p)
	// Output:
	// publish: [
	//   "$JS.API.STREAM.INFO.OFFLOAD_JOBS_reports"
	//   "$JS.API.STREAM.INFO.OFFLOAD_JOBS_reports_DEAD"
	//   "$JS.API.STREAM.INFO.OFFLOAD_JOBS_reports_SCHEDULED"
	//   "$JS.API.STREAM.INFO.KV_OFFLOAD_JOBS_reports_STATUS"
	//   "$JS.API.STREAM.INFO.KV_OFFLOAD_JOBS_reports_KEYS"
	//   "$JS.API.CONSUMER.INFO.OFFLOAD_JOBS_reports.workers"
	//   "offload.jobs.reports.job.*"
	//   "offload.jobs.reports.scheduled.*"
	//   "$KV.OFFLOAD_JOBS_reports_KEYS.>"
	//   "$JS.API.STREAM.MSG.GET.KV_OFFLOAD_JOBS_reports_KEYS"
	//   "$JS.API.DIRECT.GET.KV_OFFLOAD_JOBS_reports_KEYS"
	//   "$JS.API.DIRECT.GET.KV_OFFLOAD_JOBS_reports_KEYS.>"
	//   "$JS.API.STREAM.MSG.GET.KV_OFFLOAD_JOBS_reports_STATUS"
	//   "$JS.API.DIRECT.GET.KV_OFFLOAD_JOBS_reports_STATUS"
	//   "$JS.API.DIRECT.GET.KV_OFFLOAD_JOBS_reports_STATUS.>"
	//   "$JS.API.STREAM.MSG.GET.OFFLOAD_JOBS_reports"
	//   "$JS.API.DIRECT.GET.OFFLOAD_JOBS_reports"
	//   "$JS.API.DIRECT.GET.OFFLOAD_JOBS_reports.>"
	//   "$JS.API.STREAM.MSG.GET.OFFLOAD_JOBS_reports_SCHEDULED"
	//   "$JS.API.DIRECT.GET.OFFLOAD_JOBS_reports_SCHEDULED"
	//   "$JS.API.DIRECT.GET.OFFLOAD_JOBS_reports_SCHEDULED.>"
	//   "$JS.API.CONSUMER.CREATE.KV_OFFLOAD_JOBS_reports_STATUS.>"
	//   "$JS.API.CONSUMER.DELETE.KV_OFFLOAD_JOBS_reports_STATUS.>"
	//   "$JS.FC.KV_OFFLOAD_JOBS_reports_STATUS.>"
	//   "$JS.FC.*.*.KV_OFFLOAD_JOBS_reports_STATUS.>"
	// ]
	// subscribe: [
	//   "_INBOX.>"
	// ]
}
