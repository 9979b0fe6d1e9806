package model

import "testing"

// Only the name localhost and loopback IP literals count as this machine:
// a name that merely starts like one is somebody else's host.
func TestIsLoopback(t *testing.T) {
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"http://localhost:8000", true},
		{"http://LocalHost:8000/v1", true},
		{"https://localhost", true},
		{"http://127.0.0.1:8000", true},
		{"http://127.0.0.1", true},
		{"http://127.1.2.3:8000", true},
		{"http://127.255.255.254", true},
		{"http://[::1]:8000", true},
		{"http://[::1]", true},
		{"http://::1", false}, // unbracketed IPv6: not a valid URL host
		{"http://[0:0:0:0:0:0:0:1]:8000", true},
		{"http://[::ffff:127.0.0.1]:8000", true}, // IPv4-mapped: dialled as 127.0.0.1
		{"127.0.0.1:8000", true},                 // no scheme: read as http://
		{"localhost:11434", true},

		{"http://127.evil.com:8000", false}, // the old prefix check said yes
		{"http://127.0.0.1.evil.com", false},
		{"http://127.0.0.1.nip.io:8000", false}, // resolves to 127.0.0.1, but by DNS: not ours to trust
		{"http://localhost.evil.com", false},
		{"http://evillocalhost", false},
		{"http://app.localhost:8000", false}, // RFC 6761, but not every resolver honours it
		{"http://localhost.:8000", false},    // fully qualified: may go to DNS
		{"http://127.0.0.1@evil.com/", false},
		{"http://localhost:pw@10.0.0.7:8000", false},
		{"http://127.1", false},      // inet_aton shorthand: not an IP literal to Go
		{"http://2130706433", false}, // 127.0.0.1 as one number: likewise
		{"http://0x7f.0.0.1", false},
		{"http://0.0.0.0:8000", false},
		{"http://[::]:8000", false},
		{"http://10.0.0.7:8000", false},
		{"http://192.168.1.20", false},
		{"http://172.16.0.1", false},
		{"http://[fe80::1%25eth0]:8000", false},
		{"http://[::2]", false},
		{"http://128.0.0.1", false},
		{"http://gpu-box:8000", false},
		{"http://", false},
		{"", false},
		{"http://[::1", false}, // malformed
		{"http://%zz", false},
	} {
		if got := IsLoopback(c.url); got != c.want {
			t.Errorf("IsLoopback(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}
