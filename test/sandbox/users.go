package sandbox

import (
	"fmt"
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The sandbox's users. Their tokens live in Dir/tokens.csv (the API server's static token file).
const (
	UserAdmin   = "sandbox-admin" // group system:masters
	UserReader  = "ray-reader"    // get/list/watch on what doctor reads
	UserNoNodes = "ray-no-nodes"  // like ray-reader, but cannot list nodes
	// Contexts in the sandbox kubeconfig.
	ContextAdmin   = "sandbox"
	ContextReader  = "sandbox-reader"
	ContextNoNodes = "sandbox-no-nodes"
)

type user struct {
	name, context, token string
	groups               []string
}

func newUsers() []user {
	return []user{
		{UserAdmin, ContextAdmin, randomToken(), []string{"system:masters"}},
		{UserReader, ContextReader, randomToken(), nil},
		{UserNoNodes, ContextNoNodes, randomToken(), nil},
	}
}

func writeTokenFile(path string, users []user) error {
	var b strings.Builder
	for i, u := range users {
		fmt.Fprintf(&b, "%s,%s,uid-%d,\"%s\"\n", u.token, u.name, i, strings.Join(u.groups, ","))
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// writeKubeconfig writes one context per user; the admin's is current.
func writeKubeconfig(path, server, caFile string, users []user) error {
	cfg := clientcmdapi.NewConfig()
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cfg.Clusters["sandbox"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	for _, u := range users {
		cfg.AuthInfos[u.name] = &clientcmdapi.AuthInfo{Token: u.token}
		cfg.Contexts[u.context] = &clientcmdapi.Context{Cluster: "sandbox", AuthInfo: u.name, Namespace: "default"}
	}
	cfg.CurrentContext = ContextAdmin
	return clientcmd.WriteToFile(*cfg, path)
}
