package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
	"go.yaml.in/yaml/v3"
)

// node is one object's YAML tree and where it starts: a document of a file, or an item of a List.
type node struct {
	file string
	line int
	root *yaml.Node // a mapping
}

// split cuts a file into its objects: YAML documents (--- separated), a JSON object or a stream
// of them, and the items of Lists, each with the line it starts on. Empty documents (only
// comments, or nothing between two ---) are no objects, as for kubectl.
func split(file string, data []byte) ([]node, error) {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return splitJSON(file, data)
	}
	return splitYAML(file, data, 0)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// splitYAML decodes every document of data; lines are counted from offset (for a JSON object cut
// out of a stream). Documents are cut at their --- lines first, as kubectl's reader cuts them,
// and each is parsed alone: the YAML parser's lines are then the document's own.
func splitYAML(file string, data []byte, offset int) ([]node, error) {
	var out []node
	for _, c := range documents(data) {
		var doc yaml.Node
		if err := yaml.Unmarshal(c.data, &doc); err != nil {
			return nil, yamlError(file, offset+c.line-1, faultLine(c.data, err))
		}
		if len(doc.Content) == 0 {
			continue
		}
		root := doc.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
			continue // a document of comments only
		}
		if root.Kind != yaml.MappingNode {
			return nil, &FileError{File: file, Line: offset + c.line - 1 + root.Line, Msg: "not a Kubernetes object: a document must be a mapping with apiVersion and kind"}
		}
		items, err := listItems(file, offset+c.line-1, root)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// chunk is one YAML document's bytes and the line of the file it starts on.
type chunk struct {
	data []byte
	line int
}

// documents cuts data at its document separators: lines that are "---", or start with "--- ".
func documents(data []byte) []chunk {
	var out []chunk
	start, startLine, line := 0, 1, 1
	for i := 0; i <= len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data) + 1
		if end >= 0 {
			end += i
			next = end + 1
		} else {
			end = len(data)
		}
		l := bytes.TrimRight(data[i:end], " \t\r")
		if bytes.Equal(l, []byte("---")) || bytes.HasPrefix(l, []byte("--- ")) {
			out = append(out, chunk{data: data[start:i], line: startLine})
			start, startLine = min(next, len(data)), line+1
		}
		i = next
		line++
	}
	return append(out, chunk{data: data[start:], line: startLine})
}

// listItems is root itself, or the items of a List (kind List, or any kind ending in List with
// items, as kubectl get -o yaml prints them).
func listItems(file string, offset int, root *yaml.Node) ([]node, error) {
	kind := scalar(root, "kind")
	items := child(root, "items")
	if !strings.HasSuffix(kind, "List") || items == nil {
		return []node{{file: file, line: offset + root.Line, root: root}}, nil
	}
	if items.Kind != yaml.SequenceNode {
		return nil, &FileError{File: file, Line: offset + items.Line, Msg: kind + ": items must be a list of objects"}
	}
	var out []node
	for _, it := range items.Content {
		if it.Kind != yaml.MappingNode {
			return nil, &FileError{File: file, Line: offset + it.Line, Msg: kind + ": every item must be an object with apiVersion and kind"}
		}
		nested, err := listItems(file, offset, it)
		if err != nil {
			return nil, err
		}
		out = append(out, nested...)
	}
	return out, nil
}

// faultLine is err, or, when yaml.v3 names the line of the block that holds a syntax error (its
// context), the error kubectl's YAML library gives for the same bytes, which names the line of
// the fault itself (its problem). A mis-indented list item deep in a pod template is then
// reported where it is, not at the template's first line.
func faultLine(data []byte, err error) error {
	var v any
	if err2 := yamlv2.Unmarshal(data, &v); err2 != nil && yamlLine.MatchString(strings.SplitN(err2.Error(), "\n", 2)[0]) {
		return err2
	}
	return err
}

func yamlError(file string, offset int, err error) error {
	msg := strings.SplitN(err.Error(), "\n", 2)[0]
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		// The YAML parser's own errors ("did not find expected key") give the 0-based line of
		// the token it stopped at; its scanner's errors give the 1-based one.
		if strings.HasPrefix(m[2], "did not find expected") {
			line++
		}
		return &FileError{File: file, Line: offset + line, Msg: "not valid YAML: " + m[2]}
	}
	return &FileError{File: file, Line: offset + 1, Msg: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// splitJSON reads a stream of JSON objects; each is parsed again as YAML (JSON is YAML) from its
// own bytes, so that its fields keep their lines.
func splitJSON(file string, data []byte) ([]node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []node
	for {
		start := dec.InputOffset()
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			at := start
			var se *json.SyntaxError
			if errors.As(err, &se) {
				at = se.Offset
			}
			return nil, &FileError{File: file, Line: lineAt(data, at), Msg: "not valid JSON: " + err.Error()}
		}
		// raw starts at its first byte, after any whitespace the decoder skipped.
		begin := int(start) + bytes.Index(data[start:], raw[:1])
		nodes, err := splitYAML(file, raw, lineAt(data, int64(begin))-1)
		if err != nil {
			return nil, err
		}
		out = append(out, nodes...)
	}
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// child is the value of key in mapping m, nil when absent.
func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// key is the key node of key in mapping m, nil when absent.
func key(m *yaml.Node, name string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i]
		}
	}
	return nil
}

// scalar is the string value of key in m, "" when absent or not a scalar.
func scalar(m *yaml.Node, key string) string {
	if c := child(m, key); c != nil && c.Kind == yaml.ScalarNode {
		return c.Value
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }
