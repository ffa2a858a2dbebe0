# A configuration that needs no provider download: terraform_data is built into Terraform (>= 1.4) and OpenTofu.
# The first apply creates one resource; later plans report "No changes." until `app_version` changes.

variable "app_version" {
  type    = string
  default = "1.0.0"
}

variable "environment" {
  type    = string
  default = "demo"
}

locals {
  release = "signalbox-${var.environment}-${var.app_version}"
}

resource "terraform_data" "release" {
  input = {
    name    = local.release
    version = var.app_version
  }
}

output "release" {
  value = terraform_data.release.output.name
}

output "workspace" {
  value = terraform.workspace
}
