package model

import (
	"net"
	"net/url"
	"strings"
)

// IsLoopback reports whether a URL points at this machine: the TUI asks
// before sending load anywhere else, and the engine source scrapes such an
// endpoint uncompressed. Only two forms count:
//   - the name "localhost" (any case), which resolvers map to loopback
//     (/etc/hosts, RFC 6761);
//   - an IP literal in the loopback range: 127.0.0.0/8, ::1 or an
//     IPv4-mapped ::ffff:127.x (IPv6 in brackets, as URLs write it:
//     http://[::1]:8000; an unbracketed http://::1 is not a valid URL
//     host and does not count).
//
// Any other name is not loopback even when it looks like one
// (127.evil.com, localhost.evil.com) or usually resolves to one: a
// subdomain of .localhost (RFC 6761 reserves it, but not every resolver
// honours that, and one that forwards it to DNS sends the load elsewhere),
// "localhost." (a fully qualified name that may skip /etc/hosts), and
// 0.0.0.0 or private addresses, which are not this machine's loopback. A
// wrong "no" costs one confirmation; a wrong "yes" sends unasked load to
// another machine. A URL without a scheme is read as http://.
func IsLoopback(raw string) bool {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
