# petsing on AWS: S3 for media, RDS Postgres, ECS (Fargate) for the API and the control worker, and an
# EC2 GPU Auto Scaling group as an ECS capacity provider for render nodes. Temporal is Temporal Cloud.
# See docs/deployment.md.

data "aws_vpc" "this" {
  id = var.vpc_id
}

data "aws_ssm_parameter" "gpu_ami" {
  name = var.gpu_ami_ssm_parameter
}

locals {
  rds_ca_bundle = "/usr/local/share/petsing/rds-global-bundle.pem" # baked into the control-plane image

  shared_env = [
    { name = "LOG_LEVEL", value = "info" },
    { name = "TEMPORAL_ADDRESS", value = var.temporal_address },
    { name = "TEMPORAL_NAMESPACE", value = var.temporal_namespace },
    { name = "S3_BUCKET", value = aws_s3_bucket.media.bucket },
    { name = "S3_REGION", value = var.aws_region },
  ]

  oidc_env = var.oidc_issuer == "" ? [] : [
    { name = "OIDC_ISSUER", value = var.oidc_issuer },
    { name = "OIDC_AUDIENCE", value = var.oidc_audience },
    { name = "OIDC_JWKS_URL", value = var.oidc_jwks_url },
  ]

  control_plane_env = concat(local.shared_env, local.oidc_env, [
    { name = "BASE_URL", value = var.base_url },
    # Express "trust proxy" takes addresses or subnets; the load balancer's addresses are in the VPC.
    { name = "TRUST_PROXY", value = data.aws_vpc.this.cidr_block },
  ])

  temporal_secret = [{ name = "TEMPORAL_API_KEY", valueFrom = aws_ssm_parameter.secret["TEMPORAL_API_KEY"].arn }]

  # STRIPE_*: payments (both or neither); SIGNING_SECRET: one value for every API replica and control worker
  # (it derives the unsubscribe links of lifecycle email); SMTP_URL: optional, see var.smtp_enabled.
  control_plane_secrets = concat(local.temporal_secret, [
    { name = "DATABASE_URL", valueFrom = aws_ssm_parameter.database_url.arn },
    { name = "SIGNING_SECRET", valueFrom = aws_ssm_parameter.signing_secret.arn },
    { name = "STRIPE_SECRET_KEY", valueFrom = aws_ssm_parameter.secret["STRIPE_SECRET_KEY"].arn },
    { name = "STRIPE_WEBHOOK_SECRET", valueFrom = aws_ssm_parameter.secret["STRIPE_WEBHOOK_SECRET"].arn },
  ], var.smtp_enabled ? [{ name = "SMTP_URL", valueFrom = aws_ssm_parameter.secret["SMTP_URL"].arn }] : [])

  log_groups = ["api", "control-worker", "migrate", "render-node"]
}

# --- Object storage --------------------------------------------------------------------------------
# Versioning stays off (the default): videos are deleted on request and must really go.

resource "aws_s3_bucket" "media" {
  bucket = var.bucket_name
}

resource "aws_s3_bucket_public_access_block" "media" {
  bucket                  = aws_s3_bucket.media.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_server_side_encryption_configuration" "media" {
  bucket = aws_s3_bucket.media.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "AES256"
    }
  }
}

resource "aws_s3_bucket_lifecycle_configuration" "media" {
  bucket = aws_s3_bucket.media.id
  rule {
    id     = "abort-incomplete-multipart-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }
}

# --- Security groups: render nodes can reach HTTPS (S3, ECR) and Temporal Cloud, never Postgres ----

resource "aws_security_group" "alb" {
  name   = "${var.name}-alb"
  vpc_id = var.vpc_id
  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
  egress {
    from_port       = 8080
    to_port         = 8080
    protocol        = "tcp"
    security_groups = [aws_security_group.control_plane.id]
  }
}

resource "aws_security_group" "control_plane" {
  name        = "${var.name}-control-plane"
  description = "API, control worker and migrate tasks"
  vpc_id      = var.vpc_id
  egress {
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

resource "aws_security_group_rule" "api_from_alb" {
  type                     = "ingress"
  security_group_id        = aws_security_group.control_plane.id
  from_port                = 8080
  to_port                  = 8080
  protocol                 = "tcp"
  source_security_group_id = aws_security_group.alb.id
}

resource "aws_security_group" "render" {
  name        = "${var.name}-render"
  description = "GPU instances and render tasks: no ingress; egress to HTTPS and Temporal only"
  vpc_id      = var.vpc_id
  egress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
  egress {
    from_port   = 7233
    to_port     = 7233
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

resource "aws_security_group" "db" {
  name   = "${var.name}-db"
  vpc_id = var.vpc_id
  ingress {
    description     = "control plane only; render nodes are deliberately absent"
    from_port       = 5432
    to_port         = 5432
    protocol        = "tcp"
    security_groups = [aws_security_group.control_plane.id]
  }
}

# --- Postgres --------------------------------------------------------------------------------------

resource "random_password" "db" {
  length  = 32
  special = false
}

resource "aws_db_subnet_group" "this" {
  name       = var.name
  subnet_ids = var.private_subnet_ids
}

resource "aws_db_instance" "this" {
  identifier                = var.name
  engine                    = "postgres"
  engine_version            = "16"
  instance_class            = var.db_instance_class
  allocated_storage         = 20
  storage_type              = "gp3"
  storage_encrypted         = true
  db_name                   = "petsing"
  username                  = "petsing"
  password                  = random_password.db.result
  db_subnet_group_name      = aws_db_subnet_group.this.name
  vpc_security_group_ids    = [aws_security_group.db.id]
  publicly_accessible       = false
  backup_retention_period   = 7
  deletion_protection       = true
  final_snapshot_identifier = "${var.name}-final"
}

# --- Secrets (SSM SecureString, injected by ECS) ----------------------------------------------------

resource "aws_ssm_parameter" "database_url" {
  name  = "/${var.name}/DATABASE_URL"
  type  = "SecureString"
  value = "postgres://petsing:${random_password.db.result}@${aws_db_instance.this.endpoint}/petsing?sslmode=verify-full&sslrootcert=${local.rds_ca_bundle}"
}

# Created with a placeholder; set the real values out of band so they never enter Terraform state:
#   aws ssm put-parameter --overwrite --type SecureString --name /petsing/TEMPORAL_API_KEY --value ...
# Until the STRIPE_* values are real, checkout answers 503 (Stripe refuses the placeholder key).
resource "aws_ssm_parameter" "secret" {
  for_each = toset(["TEMPORAL_API_KEY", "STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "SMTP_URL"])
  name     = "/${var.name}/${each.key}"
  type     = "SecureString"
  value    = "set-me"
  lifecycle {
    ignore_changes = [value]
  }
}

resource "random_password" "signing_secret" {
  length  = 48
  special = false
}

resource "aws_ssm_parameter" "signing_secret" {
  name  = "/${var.name}/SIGNING_SECRET"
  type  = "SecureString"
  value = random_password.signing_secret.result
}

# --- IAM -------------------------------------------------------------------------------------------

data "aws_iam_policy_document" "ecs_tasks_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "execution" {
  name               = "${var.name}-ecs-execution"
  assume_role_policy = data.aws_iam_policy_document.ecs_tasks_assume.json
}

resource "aws_iam_role_policy_attachment" "execution" {
  role       = aws_iam_role.execution.name
  policy_arn = "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"
}

resource "aws_iam_role_policy" "execution_secrets" {
  role = aws_iam_role.execution.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect   = "Allow"
      Action   = ["ssm:GetParameters"]
      Resource = concat([aws_ssm_parameter.database_url.arn, aws_ssm_parameter.signing_secret.arn], [for p in aws_ssm_parameter.secret : p.arn])
    }]
  })
}

resource "aws_iam_role" "control_plane_task" {
  name               = "${var.name}-control-plane-task"
  assume_role_policy = data.aws_iam_policy_document.ecs_tasks_assume.json
}

resource "aws_iam_role_policy" "control_plane_s3" {
  role = aws_iam_role.control_plane_task.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      { Effect = "Allow", Action = ["s3:ListBucket"], Resource = aws_s3_bucket.media.arn },
      {
        Effect   = "Allow"
        Action   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"]
        Resource = "${aws_s3_bucket.media.arn}/*"
      },
    ]
  })
}

resource "aws_iam_role" "render_task" {
  name               = "${var.name}-render-task"
  assume_role_policy = data.aws_iam_policy_document.ecs_tasks_assume.json
}

# Render nodes read inputs and write outputs: no list, no delete, nothing else in AWS.
resource "aws_iam_role_policy" "render_s3" {
  role = aws_iam_role.render_task.id

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect   = "Allow"
      Action   = ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload"]
      Resource = "${aws_s3_bucket.media.arn}/*"
    }]
  })
}

resource "aws_iam_role" "render_instance" {
  name = "${var.name}-render-instance"

  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = "ec2.amazonaws.com" } }]
  })
}

resource "aws_iam_role_policy_attachment" "render_instance" {
  role       = aws_iam_role.render_instance.name
  policy_arn = "arn:aws:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role"
}

resource "aws_iam_instance_profile" "render" {
  name = "${var.name}-render"
  role = aws_iam_role.render_instance.name
}

# --- Logs ------------------------------------------------------------------------------------------

resource "aws_cloudwatch_log_group" "this" {
  for_each          = toset(local.log_groups)
  name              = "/${var.name}/${each.key}"
  retention_in_days = 30
}

# --- Load balancer (websockets work over ALB; events reach every replica via LISTEN/NOTIFY) --------

resource "aws_lb" "api" {
  name               = "${var.name}-api"
  load_balancer_type = "application"
  subnets            = var.public_subnet_ids
  security_groups    = [aws_security_group.alb.id]
  idle_timeout       = 120 # above the websocket's ping interval
}

resource "aws_lb_target_group" "api" {
  name                 = "${var.name}-api"
  port                 = 8080
  protocol             = "HTTP"
  target_type          = "ip"
  vpc_id               = var.vpc_id
  deregistration_delay = 30
  health_check {
    path    = "/health"
    matcher = "200"
  }
}

resource "aws_lb_listener" "https" {
  load_balancer_arn = aws_lb.api.arn
  port              = 443
  protocol          = "HTTPS"
  ssl_policy        = "ELBSecurityPolicy-TLS13-1-2-2021-06"
  certificate_arn   = var.certificate_arn
  default_action {
    type             = "forward"
    target_group_arn = aws_lb_target_group.api.arn
  }
}

# --- ECS: cluster, control-plane tasks on Fargate --------------------------------------------------

resource "aws_ecs_cluster" "this" {
  name = var.name
  setting {
    name  = "containerInsights"
    value = "enabled"
  }
}

resource "aws_ecs_task_definition" "control_plane" {
  for_each = {
    api            = ["petsing", "api"]
    control-worker = ["petsing", "worker", "control"]
    migrate        = ["petsing", "migrate"]
  }
  family                   = "${var.name}-${each.key}"
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = each.key == "migrate" ? 512 : 1024
  memory                   = each.key == "migrate" ? 1024 : 2048
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.control_plane_task.arn
  runtime_platform {
    operating_system_family = "LINUX"
    cpu_architecture        = "X86_64"
  }
  container_definitions = jsonencode([{
    name         = each.key
    image        = var.control_plane_image
    command      = each.value
    essential    = true
    environment  = local.control_plane_env
    secrets      = local.control_plane_secrets
    portMappings = each.key == "api" ? [{ containerPort = 8080, protocol = "tcp" }] : []
    stopTimeout  = 60
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        awslogs-group         = aws_cloudwatch_log_group.this[each.key].name
        awslogs-region        = var.aws_region
        awslogs-stream-prefix = each.key
      }
    }
  }])
}

resource "aws_ecs_service" "control_plane" {
  for_each = {
    api            = var.api_desired_count
    control-worker = var.control_worker_desired_count
  }
  name            = each.key
  cluster         = aws_ecs_cluster.this.id
  task_definition = aws_ecs_task_definition.control_plane[each.key].arn
  desired_count   = each.value
  launch_type     = "FARGATE"

  health_check_grace_period_seconds = each.key == "api" ? 60 : null
  network_configuration {
    subnets         = var.private_subnet_ids
    security_groups = [aws_security_group.control_plane.id]
  }
  deployment_circuit_breaker {
    enable   = true
    rollback = true
  }
  dynamic "load_balancer" {
    for_each = each.key == "api" ? [1] : []
    content {
      target_group_arn = aws_lb_target_group.api.arn
      container_name   = "api"
      container_port   = 8080
    }
  }
  depends_on = [aws_lb_listener.https]
}

# --- Render nodes: GPU Auto Scaling group as a capacity provider ------------------------------------

resource "aws_launch_template" "render" {
  name_prefix   = "${var.name}-render-"
  image_id      = nonsensitive(data.aws_ssm_parameter.gpu_ami.value)
  instance_type = var.render_instance_type
  iam_instance_profile {
    arn = aws_iam_instance_profile.render.arn
  }
  vpc_security_group_ids = [aws_security_group.render.id]
  metadata_options {
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size = 100 # the CUDA image is several GB
      volume_type = "gp3"
      encrypted   = true
    }
  }
  # Tasks use their task role only: block the instance role from containers (awsvpc mode).
  user_data = base64encode(<<-EOT
    #!/bin/bash
    cat >> /etc/ecs/ecs.config <<EOF
    ECS_CLUSTER=${aws_ecs_cluster.this.name}
    ECS_ENABLE_GPU_SUPPORT=true
    ECS_AWSVPC_BLOCK_IMDS=true
    ECS_CONTAINER_STOP_TIMEOUT=120s
    EOF
  EOT
  )
}

resource "aws_autoscaling_group" "render" {
  name                  = "${var.name}-render"
  vpc_zone_identifier   = var.private_subnet_ids
  min_size              = var.render_min_nodes
  max_size              = var.render_max_nodes
  protect_from_scale_in = true # ECS decides which instances are idle (managed termination protection)
  launch_template {
    id      = aws_launch_template.render.id
    version = "$Latest"
  }
  tag {
    key                 = "AmazonECSManaged"
    value               = "true"
    propagate_at_launch = true
  }
  lifecycle {
    ignore_changes = [desired_capacity]
  }
}

resource "aws_ecs_capacity_provider" "gpu" {
  name = "${var.name}-gpu"
  auto_scaling_group_provider {
    auto_scaling_group_arn         = aws_autoscaling_group.render.arn
    managed_termination_protection = "ENABLED"
    managed_scaling {
      status          = "ENABLED"
      target_capacity = 100
    }
  }
}

resource "aws_ecs_cluster_capacity_providers" "this" {
  cluster_name       = aws_ecs_cluster.this.name
  capacity_providers = ["FARGATE", aws_ecs_capacity_provider.gpu.name]
}

resource "aws_ecs_task_definition" "render" {
  family                   = "${var.name}-render-node"
  requires_compatibilities = ["EC2"]
  network_mode             = "awsvpc"
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.render_task.arn

  container_definitions = jsonencode([{
    name              = "render-node"
    image             = var.render_node_image
    command           = ["petsing", "worker", "render"]
    essential         = true
    memoryReservation = 12288
    environment = concat(local.shared_env, [
      { name = "RENDER_EXECUTION_PROVIDER", value = "cuda" },
      { name = "RENDER_CUDA_FALLBACK", value = "refuse" },
      { name = "RENDER_CONCURRENCY", value = "1" },
    ])
    secrets              = local.temporal_secret # no DATABASE_URL: render nodes never see the database
    resourceRequirements = [{ type = "GPU", value = "1" }]
    stopTimeout          = 120
    logConfiguration = {
      logDriver = "awslogs"
      options = {
        awslogs-group         = aws_cloudwatch_log_group.this["render-node"].name
        awslogs-region        = var.aws_region
        awslogs-stream-prefix = "render-node"
      }
    }
  }])
}

resource "aws_ecs_service" "render" {
  name            = "render-node"
  cluster         = aws_ecs_cluster.this.id
  task_definition = aws_ecs_task_definition.render.arn
  desired_count   = var.render_desired_count
  capacity_provider_strategy {
    capacity_provider = aws_ecs_capacity_provider.gpu.name
    weight            = 1
  }
  network_configuration {
    subnets         = var.private_subnet_ids
    security_groups = [aws_security_group.render.id]
  }
  lifecycle {
    ignore_changes = [desired_count] # owned by the backlog-based autoscaler (docs/deployment.md)
  }
  depends_on = [aws_ecs_cluster_capacity_providers.this]
}
