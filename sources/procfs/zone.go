package procfs

import (
	"bytes"
	"errors"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Zone is the time zone process pid's clock reads in, as its C library
// works it out: its TZ (a zone name, or a file after ':' or '/'), else its
// own root's /etc/localtime (a container's, not the host's), else UTC
// (no /etc/localtime at all). name says which ("Europe/Paris", "UTC").
// ok is false when that cannot be told: the environment or the root is
// another user's, or the TZ is a POSIX rule llmtop does not read
// ("CET-1CEST,M3.5.0,M10.5.0/3").
func Zone(fsys fs.FS, pid int) (loc *time.Location, name string, ok bool) {
	dir := strconv.Itoa(pid)
	environ, err := fs.ReadFile(fsys, dir+"/environ")
	if err != nil {
		return nil, "", false
	}
	for _, kv := range bytes.Split(environ, []byte{0}) {
		if v, found := bytes.CutPrefix(kv, []byte("TZ=")); found {
			return tzZone(fsys, dir, string(v))
		}
	}
	const localtime = "/etc/localtime"
	target, err := fs.ReadLink(fsys, dir+"/root"+localtime)
	switch {
	case err == nil:
		// Its absolute target read through /proc/PID/root would be
		// resolved in llmtop's root: read it in the process's.
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(localtime), target)
		}
		n := zoneName(target)
		if data, err := fs.ReadFile(fsys, dir+"/root"+path.Clean(target)); err == nil {
			if loc, err := time.LoadLocationFromTZData(n, data); err == nil {
				return loc, n, true
			}
		}
		if loc, err := time.LoadLocation(n); err == nil && n != "" {
			return loc, n, true
		}
		return nil, "", false
	case errors.Is(err, fs.ErrNotExist):
		return time.UTC, "UTC", true
	}
	// not a link (a copied file), or not readable as one
	data, err := fs.ReadFile(fsys, dir+"/root"+localtime)
	if errors.Is(err, fs.ErrNotExist) {
		return time.UTC, "UTC", true
	}
	if err != nil {
		return nil, "", false
	}
	loc, err = time.LoadLocationFromTZData("localtime", data)
	if err != nil {
		return nil, "", false
	}
	return loc, "the process's /etc/localtime", true
}

// tzZone reads a TZ value as the C library does for a zone name or file;
// a POSIX rule is not read (ok false).
func tzZone(fsys fs.FS, dir, tz string) (*time.Location, string, bool) {
	tz = strings.TrimPrefix(tz, ":")
	if tz == "" || tz == "UTC" || tz == "UTC0" {
		return time.UTC, "UTC", true
	}
	file := tz
	if !path.IsAbs(file) {
		if strings.Contains(tz, "..") {
			return nil, "", false
		}
		file = "/usr/share/zoneinfo/" + tz
	}
	n := zoneName(file)
	if data, err := fs.ReadFile(fsys, dir+"/root"+path.Clean(file)); err == nil {
		if loc, err := time.LoadLocationFromTZData(n, data); err == nil {
			return loc, n, true
		}
	}
	if loc, err := time.LoadLocation(n); err == nil && n != "" && !path.IsAbs(n) {
		return loc, n, true
	}
	return nil, "", false
}

// zoneName is a zone file's name: what follows zoneinfo/ in its path.
func zoneName(file string) string {
	if _, after, ok := strings.Cut(file, "zoneinfo/"); ok {
		return after
	}
	return file
}
