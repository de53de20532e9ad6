// Package schema holds the version of every machine-readable document kubectl ray writes
// (doctor's DoctorReport, heal's HealReport, the chaos reports): one version for all, so a
// script reads them the same way. A breaking change to any of them bumps it, in the same change
// as the docs that describe the schema.
package schema

// APIVersion is the apiVersion field of every -o json|yaml document.
const APIVersion = "kubectl-ray.io/v1alpha1"
