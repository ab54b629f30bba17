package natsremote

// KindName names a protocol message's kind, for tests that watch the
// subjects: "call", "ping", "full", "result", ...
func KindName(data []byte) string {
	if len(data) < 2 || data[0] != protoVersion {
		return "?"
	}
	if name, ok := kindNames[data[1]]; ok {
		return name
	}
	return "?"
}

var kindNames = map[byte]string{
	kindCall: "call", kindCancel: "cancel", kindPing: "ping",
	kindFull: "full", kindUnknown: "unknown", kindResult: "result", kindError: "error",
	kindPanic: "panic", kindGoexit: "goexit", kindTooLarge: "too-large", kindCrashed: "crashed",
	kindEnded: "ended", kindLost: "lost", kindPong: "pong", kindAdvert: "advert",
}
