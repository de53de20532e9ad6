// Package docs renders the command reference (docs/reference) from the cobra tree, so the pages
// cannot drift from the flags the binary really has: a test fails when the checked-in pages differ
// from what Render returns (regenerate with `make docs`).
package docs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmd"
	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// Tree is the command tree as `kubectl ray` shows it.
func Tree() *cobra.Command {
	f := cmdutil.NewFactory(genericclioptions.NewConfigFlags(true), genericiooptions.NewTestIOStreamsDiscard())
	return cmd.NewRootCmd(f)
}

// Render returns the reference pages by file name: one per visible command, and index.md.
func Render(root *cobra.Command) map[string][]byte {
	home, _ := os.UserHomeDir()
	pages := map[string][]byte{}
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !visible(c) {
			return
		}
		all = append(all, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range all {
		pages[FileName(c)] = page(c, home)
	}
	pages["index.md"] = index(all)
	return pages
}

// Write replaces dir's *.md files with pages.
func Write(dir string, pages map[string][]byte) error {
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return err
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// FileName is the page of c: kubectl_ray_chaos_head-kill.md.
func FileName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

func visible(c *cobra.Command) bool {
	return !c.Hidden && c.Name() != "help" && c.Name() != cobra.ShellCompRequestCmd && c.Name() != cobra.ShellCompNoDescRequestCmd
}

const banner = "<!-- Generated from the cobra tree by `make docs` (hack/docgen). Do not edit. -->\n\n"

func page(c *cobra.Command, home string) []byte {
	var b bytes.Buffer
	b.WriteString(banner)
	fmt.Fprintf(&b, "# %s\n\n%s\n\n", c.CommandPath(), sentence(c.Short))
	if c.Long != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Long))
	}
	if c.Runnable() {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "Aliases: %s\n\n", strings.Join(c.Aliases, ", "))
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "## Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n "))
	}
	if subs := visibleChildren(c); len(subs) > 0 {
		b.WriteString("## Commands\n\n| command | what it does |\n|---|---|\n")
		for _, s := range subs {
			fmt.Fprintf(&b, "| [%s](%s) | %s |\n", s.CommandPath(), FileName(s), sentence(s.Short))
		}
		b.WriteString("\n")
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		title := "Flags"
		if !c.HasParent() {
			title = "Flags (all commands take these)"
		}
		fmt.Fprintf(&b, "## %s\n\n```\n%s```\n\n", title, usages(fs, home))
	}
	if c.HasParent() {
		root := c.Root()
		fmt.Fprintf(&b, "Every command also takes kubectl's flags (`--kubeconfig`, `--context`, `-n`, `--as`, ...) and `--no-color`: see [%s](%s).\n\n", root.CommandPath(), FileName(root))
		p := c.Parent()
		fmt.Fprintf(&b, "See also: [%s](%s) — %s\n", p.CommandPath(), FileName(p), sentence(p.Short))
	} else {
		b.WriteString("Exit codes: [../exit-codes.md](../exit-codes.md). RBAC: [../rbac.md](../rbac.md).\n")
	}
	return b.Bytes()
}

// usages prints flags as --help does, with the home directory (cache-dir's default) written as ~
// so the page does not depend on who generated it.
func usages(fs *pflag.FlagSet, home string) string {
	fs.VisitAll(func(f *pflag.Flag) {
		if home != "" && strings.Contains(f.DefValue, home) {
			f.DefValue = strings.ReplaceAll(f.DefValue, home, "~")
		}
	})
	return fs.FlagUsagesWrapped(0)
}

func visibleChildren(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range c.Commands() {
		if visible(s) {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

func index(all []*cobra.Command) []byte {
	var b bytes.Buffer
	b.WriteString(banner)
	b.WriteString("# Command reference\n\nOne page per command, generated from the binary's own command tree.\n\n| command | what it does |\n|---|---|\n")
	for _, c := range all {
		fmt.Fprintf(&b, "| [%s](%s) | %s |\n", c.CommandPath(), FileName(c), sentence(c.Short))
	}
	return b.Bytes()
}

func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}
