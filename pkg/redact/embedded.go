package redact

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Some fields hold a document of their own: a RayJob's runtimeEnvYAML, a RayService's
// serveConfigV2 (its applications' runtime_env, args and user_config), kubectl's
// last-applied-configuration. They are parsed as the YAML (or JSON, which YAML reads too) they
// hold, in every form YAML allows, block or flow: a value under a secret-sounding name
// (runtime_env's env_vars: {HF_TOKEN: V}), a list read as an argv (pip: ["--index-url",
// "https://u:V@host"], pip_install_options), and every string's shapes (a working_dir URL's
// token).

// embeddedValues calls found with every secret value of the document s.
func embeddedValues(s string, found func(string)) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return err
	}
	walkYAML(&doc, found, false)
	return nil
}

// AddEmbedded adds the secret values of a document a field holds; a document that does not
// parse is an error (and its caller redacts the whole field).
func (set Set) AddEmbedded(s string) error {
	return embeddedValues(s, func(v string) { set.Add(v) })
}

// RedactEmbedded is the document s with its secret values redacted (added to found), written
// back as YAML in the styles it had. A document that does not parse is returned as Redacted
// whole, with the error: it is never written raw.
func RedactEmbedded(s string, found Set) (string, error) {
	if strings.TrimSpace(s) == "" {
		return s, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return Redacted, fmt.Errorf("not YAML or JSON (%v), so redacted whole", firstLine(err.Error()))
	}
	walkYAML(&doc, func(v string) { found.Add(v) }, true)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return Redacted, fmt.Errorf("cannot be written back (%v), so redacted whole", err)
	}
	_ = enc.Close()
	return b.String(), nil
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// walkYAML finds the secrets of a node (and, with rewrite, redacts them in place).
func walkYAML(n *yaml.Node, found func(string), rewrite bool) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkYAML(c, found, rewrite)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Value != "" && IsSecretName(k.Value) {
				found(v.Value)
				if rewrite && secretValue(v.Value) {
					setScalar(v, Redacted)
				}
				continue
			}
			walkYAML(v, found, rewrite)
		}
	case yaml.SequenceNode:
		argv := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				argv = nil
				break
			}
			argv = append(argv, c.Value)
		}
		if argv != nil {
			set := Set{}
			redacted := RedactArgv(argv, set)
			for v := range set {
				found(v)
			}
			if rewrite {
				for i, c := range n.Content {
					if c.Value != redacted[i] {
						setScalar(c, redacted[i])
					}
				}
			}
			return
		}
		for _, c := range n.Content {
			walkYAML(c, found, rewrite)
		}
	case yaml.ScalarNode:
		set := Set{}
		set.AddText(n.Value)
		for v := range set {
			found(v)
		}
		if rewrite {
			if r := replaceSpans(n.Value, shapeSpans(n.Value)); r != n.Value {
				setScalar(n, r)
			}
		}
	}
}

func setScalar(n *yaml.Node, v string) {
	n.Value, n.Tag = v, "!!str"
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
		n.Style = 0
	}
}
