variable "name" {
  description = "Prefix for every resource name."
  type        = string
  default     = "petsing"
}

variable "aws_region" {
  type    = string
  default = "eu-central-1"
}

# --- Network (an existing VPC: private subnets need a NAT gateway for ECR, S3 and Temporal Cloud) ---

variable "vpc_id" {
  type = string
}

variable "private_subnet_ids" {
  description = "Subnets for tasks, GPU instances and RDS (at least two availability zones)."
  type        = list(string)
}

variable "public_subnet_ids" {
  description = "Subnets for the API load balancer."
  type        = list(string)
}

variable "certificate_arn" {
  description = "ACM certificate for the HTTPS listener (the host name in base_url)."
  type        = string
}

# --- Images and processes ---

variable "control_plane_image" {
  description = "infra/docker/control-plane.Dockerfile, pushed to a registry (for example ECR)."
  type        = string
}

variable "render_node_image" {
  description = "infra/docker/render-node.Dockerfile, pushed to a registry."
  type        = string
}

variable "base_url" {
  description = "Public address of the API (BASE_URL), for example https://api.petsing.example."
  type        = string
}

variable "api_desired_count" {
  type    = number
  default = 2
}

variable "control_worker_desired_count" {
  type    = number
  default = 1
}

# --- Temporal Cloud (the API key goes into SSM, see docs/deployment.md) ---

variable "temporal_address" {
  description = "TEMPORAL_ADDRESS, for example petsing.a1b2c.tmprl.cloud:7233."
  type        = string
}

variable "temporal_namespace" {
  type = string
}

# --- Identity provider for the web app (all three or none; none trusts development tokens) ---

variable "oidc_issuer" {
  type    = string
  default = ""
}

variable "oidc_audience" {
  type    = string
  default = ""
}

variable "oidc_jwks_url" {
  type    = string
  default = ""
}

variable "smtp_enabled" {
  description = "Pass the SMTP_URL parameter (set it out of band first) to the control plane; without it lifecycle email stays in the outbox."
  type        = bool
  default     = false
}

# --- Database ---

variable "db_instance_class" {
  type    = string
  default = "db.t4g.micro"
}

# --- Object storage ---

variable "bucket_name" {
  description = "Globally unique S3 bucket name for media."
  type        = string
}

# --- Render nodes ---

variable "render_instance_type" {
  type    = string
  default = "g5.xlarge"
}

variable "render_min_nodes" {
  type    = number
  default = 0
}

variable "render_max_nodes" {
  type    = number
  default = 4
}

variable "render_desired_count" {
  description = "Render tasks (one GPU each); scale it on the GPU task queue backlog (docs/deployment.md)."
  type        = number
  default     = 1
}

variable "gpu_ami_ssm_parameter" {
  description = "SSM parameter holding the ECS-optimized GPU AMI id."
  type        = string
  default     = "/aws/service/ecs/optimized-ami/amazon-linux-2/gpu/recommended/image_id"
}
