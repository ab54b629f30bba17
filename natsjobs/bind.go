package natsjobs

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// binder binds Open to a queue's streams, buckets and consumer: it looks
// each up, creates it if it is missing and updates it if it doesn't say
// what o says — each only where the connection's user may (see Open).
type binder struct {
	nc *nats.Conn
	js jetstream.JetStream
	o  Options
}

// The JetStream API subjects Open's lookups, creations and updates ask
// on (nats.go's jetstream package, at the default API prefix).
const (
	apiPrefix      = "$JS.API."
	apiAccountInfo = apiPrefix + "INFO"
)

func apiStream(op, stream string) string { return apiPrefix + "STREAM." + op + "." + stream }

func apiConsumer(op, stream, consumer string) string {
	return apiPrefix + "CONSUMER." + op + "." + stream + "." + consumer
}

// stream binds the stream cfg describes, what Open's errors call what.
func (b *binder) stream(ctx context.Context, cfg jetstream.StreamConfig, what string) (jetstream.Stream, error) {
	for range 2 {
		var s jetstream.Stream
		err := b.request(ctx, func(ctx context.Context) (err error) {
			s, err = b.js.Stream(ctx, cfg.Name)
			return err
		}, apiStream("INFO", cfg.Name))
		switch {
		case err == nil:
			if settled(cfg, s.CachedInfo().Config) {
				return s, nil
			}
			var updated jetstream.Stream
			err = b.request(ctx, func(ctx context.Context) (err error) {
				updated, err = b.js.UpdateStream(ctx, cfg)
				return err
			}, apiStream("UPDATE", cfg.Name))
			if errors.Is(err, nats.ErrPermissionViolation) {
				return s, nil // bound as it is: see Open
			}
			if err != nil {
				return nil, b.failed(what, cfg.Name, "update", err)
			}
			return updated, nil
		case errors.Is(err, jetstream.ErrStreamNotFound):
			err = b.request(ctx, func(ctx context.Context) (err error) {
				s, err = b.js.CreateStream(ctx, cfg)
				return err
			}, apiStream("CREATE", cfg.Name))
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				continue // another Open made it meanwhile, saying otherwise
			}
			if err != nil {
				return nil, b.failed(what, cfg.Name, "create", err)
			}
			return s, nil
		default:
			return nil, b.failed(what, cfg.Name, "look up", err)
		}
	}
	return nil, fmt.Errorf("natsjobs: queue %q: %s %s: made and changed by another Open meanwhile", b.o.Name, what, cfg.Name)
}

// bucket binds the bucket cfg describes.
func (b *binder) bucket(ctx context.Context, cfg jetstream.KeyValueConfig, what string) (jetstream.KeyValue, error) {
	name := kvStreamName(cfg.Bucket)
	// What nats.go makes of cfg, in the settings Open sets.
	want := jetstream.StreamConfig{MaxAge: cfg.TTL, MaxMsgsPerSubject: int64(cfg.History), Storage: cfg.Storage, Replicas: cfg.Replicas}
	bind := func() (kv jetstream.KeyValue, err error) {
		err = b.request(ctx, func(ctx context.Context) (err error) {
			kv, err = b.js.KeyValue(ctx, cfg.Bucket)
			return err
		}, apiStream("INFO", name))
		if err != nil {
			return nil, b.failed(what, cfg.Bucket, "look up", err)
		}
		return kv, nil
	}
	for range 2 {
		var s jetstream.Stream
		err := b.request(ctx, func(ctx context.Context) (err error) {
			s, err = b.js.Stream(ctx, name)
			return err
		}, apiStream("INFO", name))
		var kv jetstream.KeyValue
		switch {
		case err == nil && settled(want, s.CachedInfo().Config):
			return bind()
		case err == nil:
			err = b.request(ctx, func(ctx context.Context) (err error) {
				kv, err = b.js.UpdateKeyValue(ctx, cfg)
				return err
			}, apiAccountInfo, apiStream("UPDATE", name))
			if errors.Is(err, nats.ErrPermissionViolation) {
				return bind() // as it is: see Open
			}
			if err != nil {
				return nil, b.failed(what, cfg.Bucket, "update", err)
			}
			return kv, nil
		case errors.Is(err, jetstream.ErrStreamNotFound):
			err = b.request(ctx, func(ctx context.Context) (err error) {
				kv, err = b.js.CreateKeyValue(ctx, cfg)
				return err
			}, apiAccountInfo, apiStream("CREATE", name))
			if errors.Is(err, jetstream.ErrBucketExists) {
				continue // another Open made it meanwhile, saying otherwise
			}
			if err != nil {
				return nil, b.failed(what, cfg.Bucket, "create", err)
			}
			return kv, nil
		default:
			return nil, b.failed(what, cfg.Bucket, "look up", err)
		}
	}
	return nil, fmt.Errorf("natsjobs: queue %q: %s %s: made and changed by another Open meanwhile", b.o.Name, what, cfg.Bucket)
}

// consumer binds the durable consumer cfg describes on stream s.
func (b *binder) consumer(ctx context.Context, s jetstream.Stream, cfg jetstream.ConsumerConfig, what string) (jetstream.Consumer, error) {
	stream := s.CachedInfo().Config.Name
	var c jetstream.Consumer
	err := b.request(ctx, func(ctx context.Context) (err error) {
		c, err = s.Consumer(ctx, cfg.Durable)
		return err
	}, apiConsumer("INFO", stream, cfg.Durable))
	switch {
	case err == nil && settled(cfg, c.CachedInfo().Config):
		return c, nil
	case err == nil:
		var updated jetstream.Consumer
		err = b.request(ctx, func(ctx context.Context) (err error) {
			updated, err = s.UpdateConsumer(ctx, cfg)
			return err
		}, apiConsumer("CREATE", stream, cfg.Durable))
		if errors.Is(err, nats.ErrPermissionViolation) {
			return c, nil // bound as it is: see Open
		}
		if err != nil {
			return nil, b.failed(what, cfg.Durable, "update", err)
		}
		return updated, nil
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		// Creating a durable consumer as it already is succeeds: two
		// Opens may race here.
		err = b.request(ctx, func(ctx context.Context) (err error) {
			c, err = s.CreateOrUpdateConsumer(ctx, cfg)
			return err
		}, apiConsumer("CREATE", stream, cfg.Durable))
		if err != nil {
			return nil, b.failed(what, cfg.Durable, "create", err)
		}
		return c, nil
	default:
		return nil, b.failed(what, cfg.Durable, "look up", err)
	}
}

// failed is Open's error when it could not do what to its what (name):
// a refusal names the permissions that allow it.
func (b *binder) failed(what, name, do string, err error) error {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return fmt.Errorf("natsjobs: queue %q: %s %s: %w", b.o.Name, do, what, err)
	}
	inbox := b.nc.Opts.InboxPrefix
	if do == "look up" {
		return fmt.Errorf("natsjobs: queue %q: NATS refused to let this connection look up its %s %s: "+
			"its user needs the permissions EnqueuerPermissions, WorkerPermissions or AdminPermissions(%q, %q) lists: %w",
			b.o.Name, what, name, b.o.Name, inbox, err)
	}
	return fmt.Errorf("natsjobs: queue %q: its %s %s is missing, and this connection may not %s it: "+
		"open the queue once as a user with the permissions AdminPermissions(%q, %q) lists: %w",
		b.o.Name, what, name, do, b.o.Name, inbox, err)
}

// settled reports whether have, a configuration the server holds, says
// all that want says: each field that want sets (not zero) is equal in
// have. The server fills the fields want leaves zero with its defaults.
func settled(want, have any) bool {
	w, h := reflect.ValueOf(want), reflect.ValueOf(have)
	for i := range w.NumField() {
		if f := w.Field(i); !f.IsZero() && !reflect.DeepEqual(f.Interface(), h.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// adopt returns o as the server holds the queue it bound: where a user
// that may not update them found them saying otherwise, their settings
// hold, and the Queue follows them (its heartbeat, the consumer's
// AckWait).
func adopt(o Options, work, dead jetstream.Stream, workers jetstream.Consumer) Options {
	w := work.CachedInfo().Config
	if w.MaxMsgs > 0 {
		o.MaxJobs = int(w.MaxMsgs)
	}
	if w.MaxBytes > 0 {
		o.MaxBytes = w.MaxBytes
	}
	o.Replicas = max(w.Replicas, 1)
	if c := workers.CachedInfo().Config; c.AckWait > 0 {
		o.Lease = c.AckWait
	}
	if d := dead.CachedInfo().Config; d.MaxAge > 0 {
		o.Retention = d.MaxAge
	}
	return o
}
