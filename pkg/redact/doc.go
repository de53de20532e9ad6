// Package redact is the one redactor every writer of kubectl-ray goes through: the bundle, heal's
// evidence and the watchdog's log lines, doctor's and chaos's output. A support bundle is handed
// to strangers, so a credential must not survive in any byte the tool writes, whichever writer
// writes it (troubleshoot.sh's YAML copy of custom resources went unredacted while its JSON copy
// was redacted: redaction that depends on the writer is missed somewhere).
//
// It works in three layers:
//
//   - by structure (Set's Add* methods, Object): values under secret-sounding names (env
//     variables, rayStartParams, runtime_env env_vars, JSON and YAML keys), Redis passwords,
//     Secret references, and every command line read as one argv, so that a flag and its value
//     in two list elements are seen together; the YAML or JSON a RayJob's runtimeEnvYAML or a
//     RayService's serveConfigV2 holds is parsed, in every form YAML allows;
//   - by shape, in free text (shapes.go, detector.go): URL passwords and tokens, secret flags,
//     key=value and "key": "value" pairs with secret names, Authorization headers, connection
//     strings, PEM private keys, and the provider key and token formats of gitleaks' default
//     rule set;
//   - by value (Redactor): every value the first two layers found is replaced wherever it
//     appears, in logs, Events, Ray's log files, reports.
//
// What no redactor catches: a secret in no known shape, under no secret-sounding name, that no
// spec reveals (a password a program prints bare on a line of its own).
package redact
