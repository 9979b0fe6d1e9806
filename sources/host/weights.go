package host

import (
	"encoding/json"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// The model's weights on disk, as the engine sees its files (through
// /proc/PID/root and /proc/PID/cwd): a Hugging Face checkpoint's
// model.safetensors.index.json (its metadata.total_size is the tensors'
// bytes), a single model.safetensors, or a GGUF file. The model is the
// first argument of the engine's command line that names one: a local
// path, or an org/name repository in the model cache. No flag names are
// needed: the engines spell their model flag differently, the files do not.

// weightsFound is what a PID's arguments led to (read once per process).
type weightsFound struct {
	bytes float64
	from  string
	ok    bool
}

// maxIndexBytes bounds the index file read (a real one is tens of KiB).
const maxIndexBytes = 4 << 20

// modelWeights finds the weights of the model pid serves.
func (r *Reader) modelWeights(pid int, args []string, cache string) weightsFound {
	if w, seen := r.weightsBy[pid]; seen {
		return w
	}
	var w weightsFound
	root := strconv.Itoa(pid) + "/root"
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				a = v // --model=/models/x
			} else {
				continue
			}
		}
		var cands []string
		switch {
		case strings.HasSuffix(a, ".gguf") && !path.IsAbs(a):
			cands = []string{path.Join(strconv.Itoa(pid), "cwd", a)}
		case path.IsAbs(a):
			cands = []string{path.Join(root, a)}
		case cache != "" && strings.Count(a, "/") == 1 && !strings.HasPrefix(a, "."):
			cands = r.snapshots(path.Join(root, cache, "models--"+strings.ReplaceAll(a, "/", "--")))
		}
		for _, c := range cands {
			if w = r.weightsAt(c); w.ok {
				w.from = strings.TrimPrefix(strings.TrimPrefix(w.from, root), strconv.Itoa(pid)+"/cwd/")
				r.weightsBy[pid] = w
				return w
			}
		}
	}
	r.weightsBy[pid] = w
	return w
}

// snapshots lists a cached repository's snapshot folders, the one refs/main
// names first.
func (r *Reader) snapshots(repo string) []string {
	var out []string
	if b, err := fs.ReadFile(r.cfg.Proc, path.Join(repo, "refs", "main")); err == nil {
		out = append(out, path.Join(repo, "snapshots", strings.TrimSpace(string(b))))
	}
	ents, _ := fs.ReadDir(r.cfg.Proc, path.Join(repo, "snapshots"))
	for _, e := range ents {
		out = append(out, path.Join(repo, "snapshots", e.Name()))
	}
	return out
}

// weightsAt reads the weights' size at p: a file (GGUF, safetensors) or a
// checkpoint folder.
func (r *Reader) weightsAt(p string) weightsFound {
	st, err := fs.Stat(r.cfg.Proc, p)
	if err != nil {
		return weightsFound{}
	}
	if !st.IsDir() {
		if (strings.HasSuffix(p, ".gguf") || strings.HasSuffix(p, ".safetensors")) && st.Size() > 0 {
			return weightsFound{bytes: float64(st.Size()), from: p, ok: true}
		}
		return weightsFound{}
	}
	idx := path.Join(p, "model.safetensors.index.json")
	if f, err := r.cfg.Proc.Open(idx); err == nil {
		var doc struct {
			Metadata struct {
				TotalSize json.Number `json:"total_size"`
			} `json:"metadata"`
		}
		err := json.NewDecoder(&limited{f, maxIndexBytes}).Decode(&doc)
		f.Close()
		if n, perr := doc.Metadata.TotalSize.Float64(); err == nil && perr == nil && n > 0 {
			return weightsFound{bytes: n, from: idx, ok: true}
		}
	}
	one := path.Join(p, "model.safetensors")
	if st, err := fs.Stat(r.cfg.Proc, one); err == nil && !st.IsDir() && st.Size() > 0 {
		return weightsFound{bytes: float64(st.Size()), from: one, ok: true}
	}
	return weightsFound{}
}

// limited reads at most n bytes of f.
type limited struct {
	f fs.File
	n int64
}

func (l *limited) Read(b []byte) (int, error) {
	if l.n <= 0 {
		return 0, fs.ErrInvalid
	}
	if int64(len(b)) > l.n {
		b = b[:l.n]
	}
	k, err := l.f.Read(b)
	l.n -= int64(k)
	return k, err
}
